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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pub/sub is at-most-once. An event stored in Redis whose message no node received (written here
 * by redis-cli with the publish script, announced on a channel nobody listens to) still reaches
 * every subscriber, in order: on the next event's sequence jump, or by the periodic check when
 * nothing follows it.
 */
class LostMessageTest {

    @TempDir
    Path dir;
    RedisProcess redis;
    PushServer a;
    PushServer b;

    @BeforeEach
    void start() throws Exception {
        redis = RedisProcess.start(dir);
        a = TestServers.start(TestServers.config(Files.createDirectories(dir.resolve("a")))
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2))));
        b = TestServers.start(TestServers.config(Files.createDirectories(dir.resolve("b")))
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2))));
    }

    @AfterEach
    void stop() throws Exception {
        a.close();
        b.close();
        redis.close();
    }

    /** Stores one event of {@code topic} with the nodes' own script, but announces it nowhere. */
    private void storeSilently(String topic, String json) throws Exception {
        String meta = "push:{" + topic + "}:m";
        redis.cli("EVAL", Scripts.PUBLISH, "3", meta, "push:{" + topic + "}:s", meta,
                json, "100000", "0", "neverused", "", "0", "", "push:{" + topic + "}:nowhere", "PUBLISH");
    }

    @Test
    void anEventWhoseMessageWasLostIsBackfilledBeforeTheNextOne() throws Exception {
        try (WsClient client = WsClient.connect(b.port(), "topic=gap")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            String first = Http.publish(a.port(), "gap", "{\"n\":1}").json().path("id").asText();
            assertThat(client.awaitEvents(1, Duration.ofSeconds(5))).hasSize(1);
            storeSilently("gap", "{\"n\":2}");
            Http.Response third = Http.publish(a.port(), "gap", "{\"n\":3}");
            assertThat(EventId.parse(third.json().path("id").asText()).seq()).isEqualTo(3);
            String epoch = EventId.parse(first).epoch();
            for (int n = 2; n <= 3; n++) {
                JsonNode m = client.next(Duration.ofSeconds(5));
                assertThat(m.path("id").asText()).isEqualTo(epoch + "-" + n);
                assertThat(m.path("data").path("n").asInt()).isEqualTo(n);
            }
            assertThat(client.messages.poll(300, TimeUnit.MILLISECONDS)).isNull();
        }
    }

    @Test
    void aLostLastEventWithNothingAfterItStillArrivesWithinSeconds() throws Exception {
        try (WsClient client = WsClient.connect(b.port(), "topic=quiet")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            String first = Http.publish(a.port(), "quiet", "{\"n\":1}").json().path("id").asText();
            assertThat(client.awaitEvents(1, Duration.ofSeconds(5))).hasSize(1);
            storeSilently("quiet", "{\"n\":2}");
            JsonNode m = client.next(Duration.ofSeconds(5));
            assertThat(m.path("id").asText()).isEqualTo(EventId.parse(first).epoch() + "-2");
        }
    }

    @Test
    void aResumeFromAnIdThisNodeHasNotAppliedYetCatchesUpInsteadOfAnsweringFuture() throws Exception {
        // another node delivered event 2 already; this one has not heard of it (its message lost,
        // or simply still in flight): the ID is not from the future, and the client resumes after it
        try (WsClient follower = WsClient.connect(b.port(), "topic=ahead")) {
            assertThat(follower.next().path("type").asText()).isEqualTo("subscribed");
            String first = Http.publish(a.port(), "ahead", "{\"n\":1}").json().path("id").asText();
            assertThat(follower.awaitEvents(1, Duration.ofSeconds(5))).hasSize(1);
            String epoch = EventId.parse(first).epoch();
            storeSilently("ahead", "{\"n\":2}");
            try (WsClient resumed = WsClient.connect(b.port(), "topic=ahead@" + epoch + "-2")) {
                JsonNode subscribed = resumed.next(Duration.ofSeconds(5));
                assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
                assertThat(subscribed.path("head").asText()).isEqualTo(epoch + "-2");
                Http.publish(a.port(), "ahead", "{\"n\":3}");
                JsonNode next = resumed.next(Duration.ofSeconds(5));
                assertThat(next.path("type").asText()).as(next.toString()).isEqualTo("event");
                assertThat(next.path("id").asText()).isEqualTo(epoch + "-3");
                assertThat(resumed.messages.poll(300, TimeUnit.MILLISECONDS)).isNull();
            }
        }
    }
}
