package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.EventId;
import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.history.TopicRange;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cluster.idleTopicTimeout} against a real redis-server and a real Redis Cluster: a node
 * stops following a topic no local client used for that long (Redis no longer lists its
 * subscription), keeps following one that has a subscriber, and a client that comes back gets
 * every event once, in order, including those published while the node did not follow it.
 */
class ClusterIdleTopicTest {

    private static final Duration IDLE = Duration.ofSeconds(1);

    @TempDir
    Path dir;
    RedisProcess redis;
    RedisClusterProcess redisCluster;
    final List<PushServer> nodes = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        nodes.forEach(PushServer::close);
        if (redis != null) {
            redis.close();
        }
        if (redisCluster != null) {
            redisCluster.close();
        }
    }

    private PushServer node(String uri, Duration idle) throws Exception {
        PushServer s = TestServers.start(TestServers.config(Files.createDirectories(dir.resolve("node-" + nodes.size())))
                .withCluster(new Cluster(uri, Duration.ofSeconds(2)).withIdleTopicTimeout(idle)));
        nodes.add(s);
        return s;
    }

    private static RedisHistory shared(PushServer node) {
        return (RedisHistory) node.history();
    }

    private static EventId publish(PushServer node, String topic, int i) {
        Http.Response r = Http.publish(node.port(), topic, "{\"i\":" + i + "}");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        return EventId.parse(r.json().path("id").asText());
    }

    private static void assertEvents(WsClient client, String epoch, long from, long to) throws Exception {
        for (long seq = from; seq <= to; seq++) {
            JsonNode m = client.next(Duration.ofSeconds(10));
            assertThat(m.path("type").asText()).as("%s", m).isEqualTo("event");
            assertThat(m.path("id").asText()).isEqualTo(epoch + "-" + seq);
            assertThat(m.path("data").path("i").asLong()).isEqualTo(seq);
        }
    }

    private static void await(String what, Supplier<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.get()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    private String channels() {
        try {
            return redis.cli("PUBSUB", "CHANNELS");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aTopicNoLocalClientUsedForTheTimeoutIsUnsubscribedAndAClientComingBackGetsEveryEventOnceInOrder()
            throws Exception {
        redis = RedisProcess.start(dir);
        PushServer follower = node(redis.uri(), IDLE);
        PushServer publisher = node(redis.uri(), Duration.ZERO);
        String epoch;
        try (WsClient client = WsClient.connect(follower.port(), "topic=idle")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            assertThat(channels()).contains("push:{idle}:ev");
            epoch = publish(publisher, "idle", 1).epoch();
            publish(publisher, "idle", 2);
            publish(publisher, "idle", 3);
            assertEvents(client, epoch, 1, 3);
        }
        long left = System.nanoTime();
        await("the follower unsubscribes", () -> !channels().contains("push:{idle}:ev"));
        assertThat(Duration.ofNanos(System.nanoTime() - left)).as("not before the timeout").isGreaterThan(IDLE);
        assertThat(shared(follower).topicCount()).as("its state forgotten").isZero();
        assertThat(shared(follower).cache().held("idle", epoch)).isEqualTo(TopicRange.EMPTY);

        for (int i = 4; i <= 6; i++) {
            publish(publisher, "idle", i); // nobody on the follower hears these
        }
        try (WsClient back = WsClient.connect(follower.port(), "topic=idle@" + epoch + "-3")) {
            JsonNode subscribed = back.next();
            assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
            assertThat(subscribed.path("head").asText()).isEqualTo(epoch + "-6");
            assertThat(channels()).as("followed again").contains("push:{idle}:ev");
            assertEvents(back, epoch, 4, 6);
            publish(publisher, "idle", 7);
            assertEvents(back, epoch, 7, 7);
            assertThat(back.messages.poll(300, TimeUnit.MILLISECONDS)).as("each event once").isNull();
        }
    }

    @Test
    void aTopicWithALocalSubscriberStaysFollowedLongAfterTheTimeout() throws Exception {
        redis = RedisProcess.start(dir);
        PushServer follower = node(redis.uri(), IDLE);
        PushServer publisher = node(redis.uri(), Duration.ZERO);
        try (WsClient quiet = WsClient.connect(follower.port(), "topic=kept")) {
            assertThat(quiet.next().path("type").asText()).isEqualTo("subscribed");
            Thread.sleep(IDLE.toMillis() * 3); // three checks with no event and no read
            assertThat(channels()).contains("push:{kept}:ev");
            EventId id = publish(publisher, "kept", 1);
            JsonNode m = quiet.next(Duration.ofSeconds(5));
            assertThat(m.path("id").asText()).isEqualTo(id.toString());
        }
        await("unsubscribed once the subscriber left", () -> !channels().contains("push:{kept}:ev"));
    }

    @Test
    void clientsComingAndGoingAroundTheTimeoutWhilePublishesFlowEachGetEveryEventOnceInOrder() throws Exception {
        redis = RedisProcess.start(dir);
        PushServer follower = node(redis.uri(), IDLE);
        PushServer publisher = node(redis.uri(), Duration.ZERO);
        AtomicBoolean publishing = new AtomicBoolean(true);
        AtomicLong lastAcknowledged = new AtomicLong();
        List<Integer> failures = new ArrayList<>();
        String epoch = publish(publisher, "churn", 1).epoch();
        lastAcknowledged.set(1);
        Thread writer = new Thread(() -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (int i = 2; publishing.get() && System.nanoTime() < deadline; i++) {
                Http.Response r = Http.publish(publisher.port(), "churn", "{\"i\":" + i + "}");
                if (r.status() == 201) {
                    lastAcknowledged.set(EventId.parse(r.json().path("id").asText()).seq());
                } else {
                    synchronized (failures) {
                        failures.add(r.status());
                    }
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "publisher");
        writer.start();
        long resumeFrom = 0;
        int unfollowed = 0;
        try {
            for (int round = 0; round < 8; round++) {
                try (WsClient client = WsClient.connect(follower.port(), "topic=churn@" + epoch + "-" + resumeFrom)) {
                    assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
                    long upTo = lastAcknowledged.get() + 5; // some replayed, some live
                    while (resumeFrom < upTo) {
                        JsonNode m = client.next(Duration.ofSeconds(10));
                        assertThat(m.path("type").asText()).as("round %d: %s", round, m).isEqualTo("event");
                        assertThat(m.path("id").asText()).as("round %d", round).isEqualTo(epoch + "-" + (resumeFrom + 1));
                        resumeFrom++;
                    }
                }
                if (round % 2 == 0) {
                    // away until the node stops following (the check runs once a second, so 1-2 s):
                    // the next round comes back to a topic it loads afresh while publishes flow
                    await("round " + round + ": unfollowed after the timeout", () -> shared(follower).known("churn") == null);
                    unfollowed++;
                } else {
                    // back well inside the timeout, around a check: to a topic still followed, or
                    // (rarely, on a slow machine) one just dropped
                    Thread.sleep(ThreadLocalRandom.current().nextLong(IDLE.toMillis() / 2));
                }
            }
        } finally {
            publishing.set(false);
            writer.join(10_000);
        }
        assertThat(failures).isEmpty();
        assertThat(unfollowed).as("rounds that came back to a topic no longer followed").isEqualTo(4);
    }

    @Test
    void onARedisClusterAnIdleTopicIsNoLongerAShardChannelAndComesBackWithEveryEvent() throws Exception {
        redisCluster = RedisClusterProcess.start(dir);
        var onEachMaster = redisCluster.topicOnEachMaster("idle");
        PushServer follower = node(redisCluster.uri(), IDLE);
        PushServer publisher = node(redisCluster.uri(), Duration.ZERO);
        String query = String.join("&", onEachMaster.values().stream().map(t -> "topic=" + t).toList());
        java.util.Map<String, String> epochs = new java.util.HashMap<>();
        try (WsClient client = WsClient.connect(follower.port(), query)) {
            for (int i = 0; i < onEachMaster.size(); i++) {
                assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            }
            for (var e : onEachMaster.entrySet()) {
                assertThat(redisCluster.cli(e.getKey(), "PUBSUB", "SHARDCHANNELS")).contains("push:{" + e.getValue() + "}:ev");
                epochs.put(e.getValue(), publish(publisher, e.getValue(), 1).epoch());
            }
            assertThat(client.awaitEvents(onEachMaster.size(), Duration.ofSeconds(10))).hasSize(onEachMaster.size());
        }
        for (var e : onEachMaster.entrySet()) {
            await("unsubscribed on its master", () -> {
                try {
                    return !redisCluster.cli(e.getKey(), "PUBSUB", "SHARDCHANNELS").contains("push:{" + e.getValue() + "}:ev");
                } catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            });
            publish(publisher, e.getValue(), 2); // while not followed
        }
        for (var e : onEachMaster.entrySet()) {
            String topic = e.getValue();
            String epoch = epochs.get(topic);
            try (WsClient back = WsClient.connect(follower.port(), "topic=" + topic + "@" + epoch + "-1")) {
                assertThat(back.next().path("type").asText()).isEqualTo("subscribed");
                assertThat(redisCluster.cli(e.getKey(), "PUBSUB", "SHARDCHANNELS")).contains("push:{" + topic + "}:ev");
                assertEvents(back, epoch, 2, 2);
                publish(publisher, topic, 3);
                assertEvents(back, epoch, 3, 3);
                assertThat(back.messages.poll(300, TimeUnit.MILLISECONDS)).isNull();
            }
        }
    }
}
