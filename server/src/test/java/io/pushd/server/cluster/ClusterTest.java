package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.EventId;
import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several in-process nodes sharing one real redis-server (started here on an ephemeral port):
 * any node serves any topic, a client resumes on another node exactly once, an idempotency key
 * means one event cluster-wide.
 */
class ClusterTest {

    @TempDir
    Path dir;
    RedisProcess redis;
    final List<PushServer> nodes = new ArrayList<>();

    @BeforeEach
    void startRedis() throws Exception {
        redis = RedisProcess.start(dir);
    }

    @AfterEach
    void stop() throws Exception {
        nodes.forEach(PushServer::close);
        if (redis != null) {
            redis.close();
        }
    }

    PushServer node() throws Exception {
        Path data = Files.createDirectories(dir.resolve("node-" + nodes.size()));
        PushServer s = TestServers.start(TestServers.config(data)
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2))));
        nodes.add(s);
        return s;
    }

    @Test
    void anEventPublishedOnNodeAReachesAWebSocketClientOnNodeB() throws Exception {
        PushServer a = node();
        PushServer b = node();
        try (WsClient client = WsClient.connect(b.port(), "topic=news")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            Http.Response published = Http.publish(a.port(), "news", "{\"n\":1}");
            assertThat(published.status()).isEqualTo(201);
            JsonNode event = client.awaitEvents(1, Duration.ofSeconds(5)).get(0);
            assertThat(event.path("id").asText()).isEqualTo(published.json().path("id").asText());
            assertThat(event.path("data").path("n").asInt()).isEqualTo(1);
        }
    }

    @Test
    void aClientResumingOnAnotherNodeGetsEveryLaterEventOnceInOrderWhileAThirdNodeTakesPublishes()
            throws Exception {
        PushServer a = node();
        PushServer b = node();
        PushServer c = node();
        AtomicBoolean publishing = new AtomicBoolean(true);
        AtomicReference<String> lastAcknowledged = new AtomicReference<>();
        List<Integer> failures = new ArrayList<>();
        Thread publisher = new Thread(() -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60); // bounded, whatever happens
            while (publishing.get() && System.nanoTime() < deadline) {
                Http.Response r = Http.publish(c.port(), "stress", "{\"v\":1}");
                if (r.status() == 201) {
                    lastAcknowledged.set(r.json().path("id").asText());
                } else {
                    synchronized (failures) {
                        failures.add(r.status());
                    }
                }
            }
        }, "publisher-to-c");
        publisher.start();
        while (lastAcknowledged.get() == null) {
            Thread.sleep(5);
        }
        String epoch = EventId.parse(lastAcknowledged.get()).epoch();
        PushServer[] handOff = {a, b, a, b, a, b};
        String resumeFrom = null;
        long expected = -1;
        long checked = 0;
        int replayed = 0;
        try {
            for (int round = 0; round < handOff.length; round++) {
                String query = resumeFrom == null ? "topic=stress" : "topic=stress@" + resumeFrom;
                try (WsClient client = WsClient.connect(handOff[round].port(), query)) {
                    JsonNode subscribed = client.next();
                    assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
                    assertThat(subscribed.path("epoch").asText()).isEqualTo(epoch);
                    long headAtSubscribe = EventId.parse(subscribed.path("head").asText()).seq();
                    if (expected < 0) {
                        expected = headAtSubscribe + 1;
                    } else if (headAtSubscribe >= expected) {
                        replayed++; // events published while away: this node replays, then hands over to live
                    }
                    for (int i = 0; i < 150; i++) { // then leave in the middle of the stream
                        JsonNode m = client.next();
                        assertThat(m.path("type").asText()).as("round %d: %s", round, m).isEqualTo("event");
                        EventId id = EventId.parse(m.path("id").asText());
                        assertThat(id.seq()).as("round %d on node %d", round, round % 2).isEqualTo(expected);
                        assertThat(id.epoch()).isEqualTo(epoch);
                        resumeFrom = id.toString();
                        expected++;
                        checked++;
                    }
                }
                Thread.sleep(30); // away for a moment while node C keeps taking publishes
            }
            publishing.set(false);
            publisher.join(10_000);
            long last = EventId.parse(lastAcknowledged.get()).seq();
            try (WsClient client = WsClient.connect(b.port(), "topic=stress@" + resumeFrom)) {
                assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
                while (expected <= last) {
                    JsonNode m = client.next();
                    assertThat(EventId.parse(m.path("id").asText()).seq()).isEqualTo(expected);
                    expected++;
                    checked++;
                }
                assertThat(client.messages.poll(300, TimeUnit.MILLISECONDS)).as("nothing after the last").isNull();
            }
        } finally {
            publishing.set(false);
            publisher.join(10_000);
        }
        assertThat(failures).isEmpty();
        assertThat(checked).isGreaterThanOrEqualTo(900);
        assertThat(replayed).as("resumes that replayed what was published while away").isGreaterThanOrEqualTo(4);
    }

    @Test
    void aNodeThatNeverSawATopicReplaysItsHistoryFromRedisInPages() throws Exception {
        PushServer a = node();
        String last = null;
        for (int i = 1; i <= 700; i++) {
            Http.Response r = Http.publish(a.port(), "cold", "{\"i\":" + i + "}");
            assertThat(r.status()).isEqualTo(201);
            last = r.json().path("id").asText();
        }
        PushServer b = node(); // started after: holds nothing of the topic
        String epoch = EventId.parse(last).epoch();
        try (WsClient client = WsClient.connect(b.port(), "topic=cold@" + epoch + "-0")) {
            JsonNode subscribed = client.next();
            assertThat(subscribed.path("head").asText()).isEqualTo(last);
            assertThat(subscribed.path("oldest").asText()).isEqualTo(epoch + "-1");
            for (int i = 1; i <= 700; i++) {
                JsonNode m = client.next();
                assertThat(m.path("id").asText()).isEqualTo(epoch + "-" + i);
                assertThat(m.path("data").path("i").asInt()).isEqualTo(i);
            }
            assertThat(client.messages.poll(300, TimeUnit.MILLISECONDS)).isNull();
        }
    }

    @Test
    void theSameIdempotencyKeySentToTwoNodesYieldsOneEventAndTheSameId() throws Exception {
        PushServer a = node();
        PushServer b = node();
        Http.Response first = Http.publish(a.port(), "orders", "{\"order\":7}", "order-7");
        Http.Response again = Http.publish(b.port(), "orders", "{\"order\":7}", "order-7");
        assertThat(first.status()).isEqualTo(201);
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.json().path("id").asText()).isEqualTo(first.json().path("id").asText());
        Http.Response other = Http.publish(b.port(), "orders", "{\"order\":8}", "order-8");
        assertThat(EventId.parse(other.json().path("id").asText()).seq())
                .isEqualTo(EventId.parse(first.json().path("id").asText()).seq() + 1);
        try (WsClient client = WsClient.connect(a.port(), "topic=orders@" + EventId.parse(
                first.json().path("id").asText()).epoch() + "-0")) {
            List<JsonNode> got = client.awaitEvents(2, Duration.ofSeconds(5));
            assertThat(got.stream().filter(m -> m.path("type").asText().equals("event"))
                    .map(m -> m.path("data").path("order").asInt())).containsExactly(7, 8);
            assertThat(client.messages.poll(300, TimeUnit.MILLISECONDS)).isNull();
        }
    }
}
