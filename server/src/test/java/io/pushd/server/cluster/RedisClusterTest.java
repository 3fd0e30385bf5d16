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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two in-process nodes on a real Redis Cluster of three masters (started here on ephemeral
 * ports), with one topic on each master: sharded pub/sub per topic, resume on the other node and
 * idempotency keys hold as on a single Redis.
 */
class RedisClusterTest {

    @TempDir
    Path dir;
    RedisClusterProcess redis;
    PushServer a;
    PushServer b;
    /** master port → a topic whose slot that master serves. */
    Map<Integer, String> topics;

    @BeforeEach
    void start() throws Exception {
        redis = RedisClusterProcess.start(dir);
        topics = redis.topicOnEachMaster("t");
        a = node("a");
        b = node("b");
    }

    private PushServer node(String name) throws Exception {
        return TestServers.start(TestServers.config(Files.createDirectories(dir.resolve(name)))
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2))));
    }

    @AfterEach
    void stop() throws Exception {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    private String query() {
        return String.join("&", topics.values().stream().map(t -> "topic=" + t).toList());
    }

    /** Reads events until {@code count} have come; other messages (subscribed) are skipped. */
    private static List<JsonNode> events(WsClient client, int count) throws InterruptedException {
        List<JsonNode> got = new ArrayList<>();
        while (got.size() < count) {
            JsonNode m = client.next(Duration.ofSeconds(10));
            assertThat(m).as("event %d of %d", got.size() + 1, count).isNotNull();
            if (m.path("type").asText().equals("event")) {
                got.add(m);
            }
        }
        return got;
    }

    /** Each topic's events in order and once: seq 1, 2, 3 … n, and the payload counts along. */
    private static void assertOnceInOrder(List<JsonNode> events, Map<Integer, String> topics, int perTopic) {
        Map<String, Long> next = new HashMap<>();
        for (JsonNode e : events) {
            String topic = e.path("topic").asText();
            long seq = EventId.parse(e.path("id").asText()).seq();
            long expected = next.getOrDefault(topic, 1L);
            assertThat(seq).as("topic %s", topic).isEqualTo(expected);
            assertThat(e.path("data").path("i").asLong()).isEqualTo(expected);
            next.put(topic, expected + 1);
        }
        for (String t : topics.values()) {
            assertThat(next.get(t)).as("events of %s", t).isEqualTo(perTopic + 1L);
        }
    }

    @Test
    void eventsOfTopicsOnEveryMasterPublishedOnNodeAReachASubscriberOnNodeBOnceInOrder() throws Exception {
        int perTopic = 40;
        try (WsClient client = WsClient.connect(b.port(), query())) {
            for (int i = 0; i < topics.size(); i++) {
                assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            }
            // sharded pub/sub, per topic: each master holds exactly its own topic's shard channel
            for (Map.Entry<Integer, String> e : topics.entrySet()) {
                assertThat(redis.cli(e.getKey(), "PUBSUB", "SHARDCHANNELS").trim())
                        .isEqualTo("push:{" + e.getValue() + "}:ev");
                assertThat(redis.cli(e.getKey(), "PUBSUB", "CHANNELS").trim()).as("no classic channel").isEmpty();
            }
            for (int i = 1; i <= perTopic; i++) {
                for (String t : topics.values()) {
                    assertThat(Http.publish(a.port(), t, "{\"i\":" + i + "}").status()).isEqualTo(201);
                }
            }
            assertOnceInOrder(events(client, perTopic * topics.size()), topics, perTopic);
            assertThat(client.messages.poll(300, TimeUnit.MILLISECONDS)).as("nothing more").isNull();
        }
    }

    @Test
    void aClientResumingOnTheOtherNodeWithItsLastIdGetsEveryLaterEventOnce() throws Exception {
        Map<String, String> last = new HashMap<>();
        try (WsClient client = WsClient.connect(b.port(), query())) {
            for (int i = 0; i < topics.size(); i++) {
                client.next();
            }
            for (int i = 1; i <= 10; i++) {
                for (String t : topics.values()) {
                    Http.publish(a.port(), t, "{\"i\":" + i + "}");
                }
            }
            for (JsonNode e : events(client, 10 * topics.size())) {
                last.put(e.path("topic").asText(), e.path("id").asText());
            }
        }
        for (int i = 11; i <= 25; i++) { // while the client is away
            for (String t : topics.values()) {
                assertThat(Http.publish(b.port(), t, "{\"i\":" + i + "}").status()).isEqualTo(201);
            }
        }
        String resume = String.join("&", topics.values().stream().map(t -> "topic=" + t + "@" + last.get(t)).toList());
        try (WsClient client = WsClient.connect(a.port(), resume)) {
            List<JsonNode> got = events(client, 15 * topics.size());
            for (String t : topics.values()) {
                List<Long> seqs = got.stream().filter(e -> e.path("topic").asText().equals(t))
                        .map(e -> EventId.parse(e.path("id").asText()).seq()).toList();
                assertThat(seqs).as("topic %s", t).containsExactlyElementsOf(
                        java.util.stream.LongStream.rangeClosed(11, 25).boxed().toList());
            }
            assertThat(client.messages.poll(300, TimeUnit.MILLISECONDS)).as("nothing more").isNull();
        }
    }

    @Test
    void theSameIdempotencyKeyOnBothNodesYieldsOneEventAndOneIdOnEveryMaster() throws Exception {
        for (String t : topics.values()) {
            Http.Response first = Http.publish(a.port(), t, "{\"i\":1}", "key-" + t);
            Http.Response again = Http.publish(b.port(), t, "{\"i\":1}", "key-" + t);
            assertThat(first.status()).isEqualTo(201);
            assertThat(again.status()).isEqualTo(200);
            assertThat(again.json().path("id").asText()).isEqualTo(first.json().path("id").asText());
            Http.Response next = Http.publish(b.port(), t, "{\"i\":2}");
            assertThat(EventId.parse(next.json().path("id").asText()).seq()).isEqualTo(2);
        }
    }

    @Test
    void aRestartedMasterIsSubscribedAgainToEachTopicAndTheyContinueWithNoHole() throws Exception {
        int restarted = topics.keySet().iterator().next();
        // two topics of two slots on one master: Lettuce's own resubscribe sends one SSUBSCRIBE for
        // both, which Redis refuses (CROSSSLOT); the node subscribes again per topic
        List<String> on = List.of(topics.get(restarted), redis.anotherTopicOn(restarted, topics.get(restarted), "u"));
        try (WsClient client = WsClient.connect(b.port(), "topic=" + on.get(0) + "&topic=" + on.get(1))) {
            client.next();
            client.next();
            for (int i = 1; i <= 5; i++) {
                for (String t : on) {
                    Http.publish(a.port(), t, "{\"i\":" + i + "}");
                }
            }
            events(client, 10);
            redis.restart(restarted, 200); // AOF on: the topics' history survives
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!redis.cli(restarted, "PUBSUB", "SHARDCHANNELS").contains(on.get(1))
                    || !redis.cli(restarted, "PUBSUB", "SHARDCHANNELS").contains(on.get(0))) {
                assertThat(System.nanoTime()).as("both shard channels subscribed again on the restarted master: %s",
                        redis.cli(restarted, "PUBSUB", "SHARDCHANNELS")).isLessThan(deadline);
                Thread.sleep(50);
            }
            for (int i = 6; i <= 10; i++) {
                for (String t : on) {
                    assertThat(Http.publish(a.port(), t, "{\"i\":" + i + "}").status()).isEqualTo(201);
                }
            }
            List<JsonNode> got = events(client, 10);
            for (String t : on) {
                assertThat(got.stream().filter(e -> e.path("topic").asText().equals(t))
                        .map(e -> EventId.parse(e.path("id").asText()).seq())).as(t).containsExactly(6L, 7L, 8L, 9L, 10L);
            }
            assertThat(client.messages.poll(300, TimeUnit.MILLISECONDS)).as("nothing more").isNull();
        }
    }
}
