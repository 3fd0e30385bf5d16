package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.EventId;
import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.history.TopicRange;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.ScratchMount;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each node's Chronicle replay cache, against a real redis-server: replays of followed topics come
 * from the node's disk (they succeed with Redis stopped), a node that missed events fills the
 * cache from Redis, an epoch change drops it, a cold replay waits for Redis without blocking the
 * event loop, a cache that cannot write only stops caching, and {@code limits.maxTopics} holds.
 */
class ClusterReplayCacheTest {

    @TempDir
    Path dir;
    RedisProcess redis;
    final List<PushServer> nodes = new ArrayList<>();
    ScratchMount mount;

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
        if (mount != null) {
            mount.close();
        }
    }

    private PushServer node(UnaryOperator<ServerConfig> tweak) throws Exception {
        return node(Files.createDirectories(dir.resolve("node-" + nodes.size())), tweak);
    }

    private PushServer node(Path data, UnaryOperator<ServerConfig> tweak) throws Exception {
        PushServer s = TestServers.start(tweak.apply(TestServers.config(data)
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2)))));
        nodes.add(s);
        return s;
    }

    private PushServer node() throws Exception {
        return node(c -> c);
    }

    private static RedisHistory shared(PushServer node) {
        return (RedisHistory) node.history();
    }

    /** Publishes {@code n} events {"i":1..n} to {@code topic} through {@code node}, in order; returns the last ID. */
    private static EventId publish(PushServer node, String topic, int from, int to) {
        String last = null;
        for (int i = from; i <= to; i++) {
            Http.Response r = Http.publish(node.port(), topic, "{\"i\":" + i + "}");
            assertThat(r.status()).as(r.body()).isEqualTo(201);
            last = r.json().path("id").asText();
        }
        return EventId.parse(last);
    }

    /** Reads {@code count} events and checks they are {@code epoch-from..} with data i = seq. */
    private static void assertEventsInOrder(WsClient client, String epoch, long from, long count) throws Exception {
        for (long seq = from; seq < from + count; seq++) {
            JsonNode m = client.next(Duration.ofSeconds(10));
            assertThat(m.path("type").asText()).as("%s", m).isEqualTo("event");
            assertThat(m.path("id").asText()).isEqualTo(epoch + "-" + seq);
            assertThat(m.path("data").path("i").asLong()).isEqualTo(seq);
        }
    }

    private static void awaitCacheHead(PushServer node, String topic, String epoch, long head) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (shared(node).cache().held(topic, epoch).head() < head) {
            assertThat(System.nanoTime()).as("cache of %s reaches %d", topic, head).isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    @Test
    void aReplayOfAFollowedTopicIsServedFromTheNodesOwnDiskEvenWithRedisStopped() throws Exception {
        PushServer a = node();
        EventId last;
        try (WsClient follower = WsClient.connect(a.port(), "topic=feed")) {
            assertThat(follower.next().path("type").asText()).isEqualTo("subscribed");
            last = publish(a, "feed", 1, 1100); // more than even the ring of a node without a cache holds
            assertThat(follower.awaitEvents(1100, Duration.ofSeconds(10))).hasSize(1100);
        }
        String epoch = last.epoch();
        assertThat(shared(a).cache().held("feed", epoch)).isEqualTo(new TopicRange(1100, 1));
        long pageReads = shared(a).pageReads();

        redis.stop(); // nothing below can come from Redis now
        try (WsClient replay = WsClient.connect(a.port(), "topic=feed@" + epoch + "-0")) {
            JsonNode subscribed = replay.next();
            assertThat(subscribed.path("head").asText()).isEqualTo(last.toString());
            // the in-memory hot tail holds the newest 64: the rest can only come from the Chronicle cache
            assertEventsInOrder(replay, epoch, 1, 1100);
            assertThat(replay.messages.poll(300, TimeUnit.MILLISECONDS)).isNull();
            assertThat(replay.closeCode).isNotDone();
        }
        assertThat(shared(a).pageReads()).as("no page read from Redis").isEqualTo(pageReads);
    }

    /** Stores one event with the nodes' own script but announces it on a channel nobody listens to. */
    private void storeSilently(String topic, int i) throws Exception {
        String meta = "push:{" + topic + "}:m";
        redis.cli("EVAL", Scripts.PUBLISH, "3", meta, "push:{" + topic + "}:s", meta,
                "{\"i\":" + i + "}", "100000", "0", "neverused", "", "0", "", "push:{" + topic + "}:nowhere",
                "PUBLISH");
    }

    @Test
    void aNodeThatMissedEventsFillsItsCacheFromRedisAndThenServesThemWithoutRedis() throws Exception {
        PushServer a = node();
        PushServer b = node();
        String epoch;
        try (WsClient follower = WsClient.connect(b.port(), "topic=gap")) {
            assertThat(follower.next().path("type").asText()).isEqualTo("subscribed");
            epoch = publish(a, "gap", 1, 10).epoch();
            for (int i = 11; i <= 110; i++) {
                storeSilently("gap", i); // b never hears of these: more than its hot tail holds
            }
            publish(a, "gap", 111, 111); // the jump makes b backfill 11..110 from the stream first
            assertEventsInOrder(follower, epoch, 1, 111);
        }
        awaitCacheHead(b, "gap", epoch, 111);
        assertThat(shared(b).cache().held("gap", epoch)).isEqualTo(new TopicRange(111, 1));

        redis.stop();
        try (WsClient replay = WsClient.connect(b.port(), "topic=gap@" + epoch + "-0")) {
            assertThat(replay.next().path("type").asText()).isEqualTo("subscribed");
            assertEventsInOrder(replay, epoch, 1, 111);
        }
    }

    @Test
    void aNodeThatNeverFollowedATopicCachesTheColdPagesItReadAndServesThemAgainWithoutRedis() throws Exception {
        PushServer a = node();
        EventId last = publish(a, "cold", 1, 600);
        PushServer b = node();
        String epoch = last.epoch();
        try (WsClient first = WsClient.connect(b.port(), "topic=cold@" + epoch + "-0")) {
            assertThat(first.next().path("type").asText()).isEqualTo("subscribed");
            assertEventsInOrder(first, epoch, 1, 600);
        }
        long pageReads = shared(b).pageReads();
        assertThat(pageReads).as("a cold replay reads Redis in pages").isGreaterThanOrEqualTo(3);
        Thread.sleep(200); // the applier appends the last page after handing it out

        redis.stop();
        try (WsClient again = WsClient.connect(b.port(), "topic=cold@" + epoch + "-0")) {
            assertThat(again.next().path("type").asText()).isEqualTo("subscribed");
            assertEventsInOrder(again, epoch, 1, 600);
        }
        assertThat(shared(b).pageReads()).isEqualTo(pageReads);
    }

    @Test
    void theHistoryRouteServesAColdPageFetchedFromRedis() throws Exception {
        PushServer a = node();
        EventId last = publish(a, "pages", 1, 300);
        PushServer b = node();
        Http.Response page = Http.get(b.port(), "/v1/topics/pages/events?after=" + last.epoch() + "-0&limit=300");
        assertThat(page.status()).as(page.body()).isEqualTo(200);
        JsonNode events = page.json().path("events");
        assertThat(events).hasSize(300);
        for (int i = 0; i < 300; i++) {
            assertThat(events.get(i).path("id").asText()).isEqualTo(last.epoch() + "-" + (i + 1));
        }
        assertThat(page.json().path("next").isNull()).isTrue();
        assertThat(shared(b).pageReads()).isGreaterThanOrEqualTo(1);
    }

    @Test
    void anEpochChangeDropsTheCachedEventsOfTheOldEpoch() throws Exception {
        PushServer a = node();
        try (WsClient follower = WsClient.connect(a.port(), "topic=ep")) {
            assertThat(follower.next().path("type").asText()).isEqualTo("subscribed");
            String old = publish(a, "ep", 1, 100).epoch();
            assertThat(follower.awaitEvents(100, Duration.ofSeconds(10))).hasSize(100);
            assertThat(shared(a).cache().held("ep", old)).isEqualTo(new TopicRange(100, 1));

            redis.restartEmpty(); // Redis has less history than the node saw: a new epoch
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (a.history().epoch("ep").equals(old)) {
                assertThat(System.nanoTime()).isLessThan(deadline);
                Thread.sleep(20);
            }
            String now = a.history().epoch("ep");
            assertThat(shared(a).cache().held("ep", old)).isEqualTo(TopicRange.EMPTY);
            Http.Response r;
            while ((r = Http.publish(a.port(), "ep", "{\"i\":1}")).status() != 201) {
                assertThat(System.nanoTime()).isLessThan(deadline);
                Thread.sleep(50);
            }
            assertThat(r.json().path("id").asText()).isEqualTo(now + "-1");
            awaitCacheHead(a, "ep", now, 1);
            assertThat(shared(a).cache().held("ep", now)).isEqualTo(new TopicRange(1, 1));
        }
        String now = a.history().epoch("ep");
        try (WsClient replay = WsClient.connect(a.port(), "topic=ep@" + now + "-0")) {
            assertThat(replay.next().path("type").asText()).isEqualTo("subscribed");
            JsonNode e = replay.next();
            assertThat(e.path("id").asText()).isEqualTo(now + "-1");
            assertThat(replay.messages.poll(300, TimeUnit.MILLISECONDS)).as("nothing of the old epoch").isNull();
        }
    }

    @Test
    void aColdReplayOf5000EventsCompletesInOrderWhileTheSameEventLoopServesOthers() throws Exception {
        PushServer a = node();
        String epoch = publish(a, "big", 1, 5000).epoch();
        // one I/O thread: the replaying WebSocket and the health check below share one event loop
        PushServer b = node(c -> c.withServer(new ServerConfig.Server("127.0.0.1", 0, 1)));
        try (WsClient first = WsClient.connect(b.port(), "topic=big")) {
            assertThat(first.next().path("type").asText()).isEqualTo("subscribed"); // b follows the topic now
        }
        long pauseMillis = 1500;
        long pausedUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pauseMillis);
        redis.cli("CLIENT", "PAUSE", Long.toString(pauseMillis), "ALL"); // every Redis command waits meanwhile
        try (WsClient replay = WsClient.connect(b.port(), "topic=big@" + epoch + "-0")) {
            assertThat(replay.next().path("type").asText()).isEqualTo("subscribed");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (shared(b).pageReads() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(shared(b).pageReads()).as("the replay asked Redis for its first page").isEqualTo(1);
            Http.Response health = Http.get(b.port(), "/healthz");
            assertThat(health.status()).isEqualTo(200);
            assertThat(System.nanoTime()).as("answered on the replay's event loop while Redis was still paused")
                    .isLessThan(pausedUntil);
            assertThat(replay.messages).as("the replay waits for its page, off the event loop").isEmpty();
            assertEventsInOrder(replay, epoch, 1, 5000);
            assertThat(replay.messages.poll(300, TimeUnit.MILLISECONDS)).isNull();
        }
    }

    @Test
    void subscribingToATopicTheNodeNeverLoadedWaitsForRedisWithoutBlockingTheEventLoop() throws Exception {
        PushServer a = node();
        String epoch = publish(a, "late", 1, 3).epoch();
        PushServer b = node(c -> c.withServer(new ServerConfig.Server("127.0.0.1", 0, 1)));
        long pauseMillis = 1500;
        long pausedUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pauseMillis);
        redis.cli("CLIENT", "PAUSE", Long.toString(pauseMillis), "ALL");
        try (WsClient client = WsClient.connect(b.port(), "topic=late@" + epoch + "-0")) {
            Http.Response health = Http.get(b.port(), "/healthz");
            assertThat(health.status()).isEqualTo(200);
            assertThat(System.nanoTime()).as("answered on the same event loop while Redis was still paused")
                    .isLessThan(pausedUntil);
            assertThat(client.messages).as("the subscription waits for the topic, off the event loop").isEmpty();
            Http.Response info = Http.get(b.port(), "/v1/topics/late");
            assertThat(info.status()).as(info.body()).isEqualTo(200); // after the pause, off the event loop
            assertThat(info.json().path("head").asText()).isEqualTo(epoch + "-3");
            JsonNode subscribed = client.next(Duration.ofSeconds(10));
            assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
            assertThat(subscribed.path("head").asText()).isEqualTo(epoch + "-3");
            assertEventsInOrder(client, epoch, 1, 3);
        }
    }

    @Test
    void aCacheThatCannotBeOpenedLeavesTheNodeServingReplaysFromRedis() throws Exception {
        Path data = Files.createDirectories(dir.resolve("blocked"));
        Files.writeString(data.resolve("cluster-cache"), "a file where the cache's directory would go");
        PushServer a = node(data, c -> c);
        assertThat(shared(a).cache()).isNull();
        EventId last = publish(a, "nocache", 1, 1200); // beyond the 1,024 events the ring then holds
        try (WsClient replay = WsClient.connect(a.port(), "topic=nocache@" + last.epoch() + "-0")) {
            assertThat(replay.next().path("type").asText()).isEqualTo("subscribed");
            assertEventsInOrder(replay, last.epoch(), 1, 1200);
        }
    }

    @Test
    void aCacheOnAFullDiskStopsCachingWhileEveryEventIsStillPublishedAndReplayed() throws Exception {
        mount = ScratchMount.tmpfs(dir, 24);
        PushServer a = node(Files.createDirectories(mount.dir().resolve("data")),
                c -> c.withStore(c.store().withMinFreeBytes(0)));
        String pad = "x".repeat(4000);
        String epoch;
        try (WsClient follower = WsClient.connect(a.port(), "topic=full")) {
            assertThat(follower.next().path("type").asText()).isEqualTo("subscribed");
            epoch = publishPadded(a, "full", 1, 20, pad);
            awaitCacheHead(a, "full", epoch, 20);
            fill(mount.dir().resolve("filler"));
            publishPadded(a, "full", 21, 600, pad); // ~2.4 MB: beyond what the cache had reserved ahead
            assertThat(follower.awaitEvents(600, Duration.ofSeconds(20))).hasSize(600);
        }
        assertThat(shared(a).cache().writable()).as("the cache stopped caching").isFalse();
        assertThat(shared(a).cache().held("full", epoch).head()).isLessThan(600);
        try (WsClient replay = WsClient.connect(a.port(), "topic=full@" + epoch + "-0")) {
            assertThat(replay.next().path("type").asText()).isEqualTo("subscribed");
            for (long seq = 1; seq <= 600; seq++) {
                JsonNode m = replay.next(Duration.ofSeconds(10));
                assertThat(m.path("id").asText()).isEqualTo(epoch + "-" + seq);
                assertThat(m.path("data").path("i").asLong()).isEqualTo(seq);
            }
        }
    }

    private static String publishPadded(PushServer node, String topic, int from, int to, String pad) {
        String epoch = null;
        for (int i = from; i <= to; i++) {
            Http.Response r = Http.publish(node.port(), topic, "{\"i\":" + i + ",\"pad\":\"" + pad + "\"}");
            assertThat(r.status()).as(r.body()).isEqualTo(201);
            epoch = EventId.parse(r.json().path("id").asText()).epoch();
        }
        return epoch;
    }

    /** Writes a file until the file system is full. */
    private static void fill(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ByteBuffer chunk = ByteBuffer.allocate(64 << 10);
            while (true) {
                chunk.clear();
                ch.write(chunk);
            }
        } catch (IOException full) {
            // ENOSPC: what this was for
        }
    }

    @Test
    void aPublishToANewTopicBeyondMaxTopicsGets507LikeASingleNodeWhileTopicsRedisHasStillWork()
            throws Exception {
        PushServer other = node();
        assertThat(Http.publish(other.port(), "elsewhere", "{}").status()).isEqualTo(201);
        PushServer a = node(c -> c.withLimits(c.limits().withMaxTopics(2)));
        assertThat(Http.publish(a.port(), "one", "{}").status()).isEqualTo(201);
        assertThat(Http.publish(a.port(), "two", "{}").status()).isEqualTo(201);
        Http.Response refused = Http.publish(a.port(), "three", "{}");
        assertThat(refused.status()).as(refused.body()).isEqualTo(507);
        assertThat(refused.json().path("error").asText()).isEqualTo("too_many_topics");
        assertThat(redis.cli("EXISTS", "push:{three}:m").trim()).as("Redis made no topic for it").isEqualTo("0");
        assertThat(Http.publish(a.port(), "one", "{}").status()).as("existing topics keep working").isEqualTo(201);
        assertThat(Http.publish(a.port(), "elsewhere", "{}").status())
                .as("a topic another node made costs this one nothing").isEqualTo(201);
    }
}
