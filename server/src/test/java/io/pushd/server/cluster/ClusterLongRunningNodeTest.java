package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.protocol.EventId;
import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a node that runs for a long time meets: topics it only ever published to, a Redis that
 * trimmed topics underneath it, and a Redis that comes back holding less of a topic's epoch than
 * the node applied (a lagging replica, an old snapshot), also after the node stopped following the
 * topic: that gets a new epoch, never an ID given twice. Found by review (red on main at b03a130).
 */
class ClusterLongRunningNodeTest {

    @TempDir
    Path dir;
    RedisProcess redis;
    final List<PushServer> nodes = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        nodes.forEach(PushServer::close);
        if (redis != null) {
            redis.close();
        }
    }

    private PushServer node(Duration idle, UnaryOperator<ServerConfig> more) throws Exception {
        ServerConfig c = TestServers.config(Files.createDirectories(dir.resolve("node-" + nodes.size())))
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2)).withIdleTopicTimeout(idle));
        PushServer s = TestServers.start(more.apply(c));
        nodes.add(s);
        return s;
    }

    private static EventId publish(PushServer node, String topic, int i) {
        Http.Response r = Http.publish(node.port(), topic, "{\"i\":" + i + "}");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        return EventId.parse(r.json().path("id").asText());
    }

    private static void await(String what, Supplier<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.get()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    /**
     * Finding: {@code held} gets every topic published through the node (published()), but only
     * retired followed topics leave it; a node that only publishes refuses every new topic once
     * limits.maxTopics distinct topics went through it, forever, though it holds nothing of them.
     */
    @Test
    void publishesToTopicsNoLocalClientFollowsDoNotMakeTheNodeRefuseNewTopicsForever() throws Exception {
        redis = RedisProcess.start(dir);
        PushServer a = node(Duration.ofSeconds(1), c -> c.withLimits(c.limits().withMaxTopics(2)));
        publish(a, "p1", 1);
        publish(a, "p2", 1);
        Thread.sleep(3000); // three idle checks: nothing of p1, p2 is followed or used here
        assertThat(((RedisHistory) a.history()).topicCount()).as("the node follows nothing").isZero();
        Http.Response r = Http.publish(a.port(), "p3", "{\"i\":1}");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
    }

    /**
     * Finding (pre-existing, kept by the new fetch path): the node's TopicLog 'oldest' is refreshed
     * only by a backfill, never while events arrive in order; once Redis trimmed (MAXLEN ~), a
     * history request without 'after' asks from the stale oldest, the page from Redis starts later,
     * and the client gets 409 reset 'expired' for a request that named no ID.
     */
    @Test
    void aHistoryRequestWithoutAfterGetsTheOldestKeptEventsAfterRedisTrimmedTheTopicByCount() throws Exception {
        redis = RedisProcess.start(dir);
        PushServer a = node(Duration.ZERO,
                c -> c.withStore(c.store().withRetention(c.store().retentionAge(), 10)));
        try (WsClient client = WsClient.connect(a.port(), "topic=trimmed")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            for (int i = 1; i <= 400; i++) {
                publish(a, "trimmed", i);
            }
            client.awaitEvents(400, Duration.ofSeconds(20));
        }
        Thread.sleep(1500); // quiet: the once-a-second check finds the node up to date, no backfill
        // what the script's MAXLEN ~ (or the age trim) does on the next publishes of a slow topic,
        // without a live event to make the node look at the stream again
        redis.cli("XTRIM", "push:{trimmed}:s", "MAXLEN", "10");
        Thread.sleep(1500);
        Http.Response r = Http.get(a.port(), "/v1/topics/trimmed/events");
        assertThat(r.status()).as(r.body()).isEqualTo(200);
    }

    /** Redis comes back holding events 1..{@code keep} of the same epoch (a lagging replica, an old snapshot). */
    private void redisLosesTheTailOf(String topic, long keep, long head) throws Exception {
        for (long s = keep + 1; s <= head; s++) {
            redis.cli("XDEL", "push:{" + topic + "}:s", s + "-0");
        }
        redis.cli("XSETID", "push:{" + topic + "}:s", keep + "-0");
        redis.cli("HSET", "push:{" + topic + "}:m", "s", Long.toString(keep));
    }

    /** Control: while the node follows the topic it passes its head to the script, which makes a new epoch. */
    @Test
    void aFollowedTopicGetsANewEpochWhenRedisComesBackWithLessOfIt() throws Exception {
        redis = RedisProcess.start(dir);
        PushServer a = node(Duration.ZERO, c -> c);
        String epoch;
        try (WsClient client = WsClient.connect(a.port(), "topic=t")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            epoch = publish(a, "t", 1).epoch();
            for (int i = 2; i <= 10; i++) {
                publish(a, "t", i);
            }
            client.awaitEvents(10, Duration.ofSeconds(10));
        }
        redisLosesTheTailOf("t", 5, 10);
        EventId next = publish(a, "t", 11);
        assertThat(next.epoch()).as("E-6..E-10 were given to other events").isNotEqualTo(epoch);
    }

    /** Found by review: the publish passed only a followed topic's epoch and head to the script. */
    @Test
    void aTopicThisNodeStoppedFollowingNeverGetsAnIdTwiceWhenRedisComesBackWithLessOfIt() throws Exception {
        redis = RedisProcess.start(dir);
        PushServer a = node(Duration.ofSeconds(1), c -> c);
        String epoch;
        try (WsClient client = WsClient.connect(a.port(), "topic=t")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            epoch = publish(a, "t", 1).epoch();
            for (int i = 2; i <= 10; i++) {
                publish(a, "t", i);
            }
            client.awaitEvents(10, Duration.ofSeconds(10));
        }
        await("the node stops following", () -> ((RedisHistory) a.history()).known("t") == null);
        redisLosesTheTailOf("t", 5, 10);
        EventId next = publish(a, "t", 11);
        assertThat(next.toString()).as("E-6 was already given to event 6 by this very node")
                .isNotEqualTo(epoch + "-6");
        assertThat(next.epoch()).isNotEqualTo(epoch);
    }
}
