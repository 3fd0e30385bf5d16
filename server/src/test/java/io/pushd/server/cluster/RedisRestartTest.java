package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.EventId;
import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.lifecycle.ServerState;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Redis goes away and comes back, with its AOF or with nothing; the nodes keep their promises. */
class RedisRestartTest {

    @TempDir
    Path dir;
    RedisProcess redis;
    PushServer a;
    PushServer b;

    @BeforeEach
    void start() throws Exception {
        redis = RedisProcess.start(dir);
        a = node("a");
        b = node("b");
    }

    @AfterEach
    void stop() throws Exception {
        for (PushServer s : new PushServer[] {a, b}) {
            if (s != null) {
                s.close();
            }
        }
        if (redis != null) {
            redis.close();
        }
    }

    private PushServer node(String name) throws Exception {
        return TestServers.start(TestServers.config(Files.createDirectories(dir.resolve(name)))
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(1))));
    }

    @Test
    void whileRedisRestartsPublishesGet503WithRetryAfterAndOpenSubscriptionsContinueWithNoHole() throws Exception {
        try (WsClient client = WsClient.connect(b.port(), "topic=t")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            List<String> acknowledged = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                acknowledged.add(publish(i % 2 == 0 ? a : b).json().path("id").asText());
            }
            redis.stop();
            for (PushServer node : new PushServer[] {a, b}) {
                long t0 = System.nanoTime();
                Http.Response refused = Http.publish(node.port(), "t", "{\"gap\":true}");
                assertThat(refused.status()).as(refused.body()).isEqualTo(503);
                assertThat(refused.header("Retry-After")).isNotBlank();
                assertThat(refused.json().path("error").asText()).isNotBlank();
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(3));
            }
            // readiness names the cause: Redis, not a full disk (whose publishes get 507)
            assertThat(storeState(a, "unreachable")).isEqualTo("unreachable");
            redis.restart(300);
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            int published = 0;
            while (published < 20) {
                PushServer node = published % 2 == 0 ? a : b;
                Http.Response r = Http.publish(node.port(), "t", "{\"after\":" + published + "}");
                if (r.status() == 201) {
                    acknowledged.add(r.json().path("id").asText());
                    published++;
                } else {
                    assertThat(r.status()).as("only 503 while reconnecting: %s", r.body()).isEqualTo(503);
                    assertThat(System.nanoTime()).as("nodes reconnect by themselves").isLessThan(deadline);
                    Thread.sleep(50);
                }
            }
            long last = EventId.parse(acknowledged.get(acknowledged.size() - 1)).seq();
            List<String> received = new ArrayList<>();
            long expected = 1;
            while (expected <= last) {
                JsonNode m = client.next(Duration.ofSeconds(10));
                assertThat(m.path("type").asText()).as("%s", m).isEqualTo("event");
                EventId id = EventId.parse(m.path("id").asText());
                assertThat(id.seq()).as("no hole, no duplicate").isEqualTo(expected);
                received.add(id.toString());
                expected++;
            }
            assertThat(received).containsAll(acknowledged);
            assertThat(storeState(a, "writable")).isEqualTo("writable");
            assertThat(client.closeCode).isNotDone();
        }
        assertThat(a.state()).isEqualTo(ServerState.READY);
        assertThat(b.state()).isEqualTo(ServerState.READY);
    }

    @Test
    void whenRedisComesBackEmptyNoIdIsReusedTheTopicGetsANewEpochAndClientsAreResetUnknownEpoch()
            throws Exception {
        try (WsClient client = WsClient.connect(a.port(), "topic=t")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            String before = null;
            for (int i = 0; i < 5; i++) {
                before = publish(b).json().path("id").asText();
            }
            assertThat(client.awaitEvents(5, Duration.ofSeconds(5))).hasSize(5);
            String oldEpoch = EventId.parse(before).epoch();

            redis.restartEmpty();
            Http.Response r;
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            while ((r = Http.publish(b.port(), "t", "{\"new\":1}")).status() != 201) {
                assertThat(r.status()).isEqualTo(503);
                assertThat(System.nanoTime()).isLessThan(deadline);
                Thread.sleep(50);
            }
            EventId first = EventId.parse(r.json().path("id").asText());
            assertThat(first.epoch()).as("a new history, never %s-1 again", oldEpoch).isNotEqualTo(oldEpoch);
            assertThat(first.seq()).isEqualTo(1);

            JsonNode reset = client.next(Duration.ofSeconds(10));
            assertThat(reset.path("type").asText()).as("%s", reset).isEqualTo("reset");
            assertThat(reset.path("reason").asText()).isEqualTo("unknown_epoch");
            assertThat(reset.path("id").asText()).isEqualTo(first.epoch() + "-0");
            JsonNode event = client.next(Duration.ofSeconds(10));
            assertThat(event.path("id").asText()).isEqualTo(first.toString());

            try (WsClient resuming = WsClient.connect(b.port(), "topic=t@" + before)) {
                assertThat(resuming.next().path("epoch").asText()).isEqualTo(first.epoch());
                JsonNode r2 = resuming.next();
                assertThat(r2.path("type").asText()).isEqualTo("reset");
                assertThat(r2.path("reason").asText()).isEqualTo("unknown_epoch");
            }
        }
    }

    @Test
    void aQuietTopicsClientsAreResetAsSoonAsRedisComesBackEmptyNotWithTheNextEvent() throws Exception {
        try (WsClient client = WsClient.connect(a.port(), "topic=t")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            String before = null;
            for (int i = 0; i < 3; i++) {
                before = publish(b).json().path("id").asText();
            }
            assertThat(client.awaitEvents(3, Duration.ofSeconds(5))).hasSize(3);

            redis.restartEmpty(); // and nobody publishes: the topic stays quiet
            JsonNode reset = client.next(Duration.ofSeconds(15));
            assertThat(reset.path("type").asText()).as("%s", reset).isEqualTo("reset");
            assertThat(reset.path("reason").asText()).isEqualTo("unknown_epoch");
            assertThat(EventId.parse(reset.path("id").asText()).epoch()).isNotEqualTo(EventId.parse(before).epoch());
        }
    }

    private static Http.Response publish(PushServer node) {
        Http.Response r = Http.publish(node.port(), "t", "{\"v\":1}");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        return r;
    }

    /** The "store" of node's /readyz (a 200) once it says {@code expected}, or after 10 s what it says then. */
    private static String storeState(PushServer node, String expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            Http.Response ready = Http.get(node.port(), "/readyz");
            assertThat(ready.status()).isEqualTo(200);
            String state = ready.json().path("store").asText();
            if (state.equals(expected) || System.nanoTime() > deadline) {
                return state;
            }
            Thread.sleep(50);
        }
    }
}
