package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The publish script's retention against a real redis-server, run directly (with a retention age
 * in milliseconds, below what the configuration allows, so that a test sees it act): the age trim
 * runs seldom, keeps exactly the events young enough when it runs, and a node loading the trimmed
 * topic tells a client from before the first kept event {@code expired}.
 */
class RedisPublishScriptTest {

    @TempDir
    Path dir;
    RedisProcess redis;
    RedisClient client;
    RedisCommands<String, String> commands;
    PushServer node;

    @BeforeEach
    void start() throws Exception {
        redis = RedisProcess.start(dir);
        client = RedisClient.create(redis.uri());
        StatefulRedisConnection<String, String> c = client.connect();
        commands = c.sync();
    }

    @AfterEach
    void stop() throws Exception {
        if (node != null) {
            node.close();
        }
        client.shutdown();
        redis.close();
    }

    /** One publish as a node sends it (no idempotency key); returns {epoch, seq, created, ts}. */
    private List<Object> publish(String topic, long retentionCount, long retentionAgeMillis) {
        String meta = "push:{" + topic + "}:m";
        return commands.eval(Scripts.PUBLISH, ScriptOutputType.MULTI,
                new String[] {meta, "push:{" + topic + "}:s", meta},
                "{\"n\":1}", Long.toString(retentionCount), Long.toString(retentionAgeMillis), "ep1", "", "0", "",
                "push:{" + topic + "}:ev", "PUBLISH");
    }

    private long firstKept(String topic) {
        List<StreamMessage<String, String>> first = commands.xrange("push:{" + topic + "}:s", Range.unbounded(),
                Limit.from(1));
        return first.isEmpty() ? 0 : Long.parseLong(first.get(0).getId().replace("-0", ""));
    }

    @Test
    void theAgeTrimRunsAtMostOncePerIntervalAndThenKeepsExactlyTheEventsYoungerThanTheAge() throws Exception {
        long age = 300;
        long every = Math.min(age, Scripts.TRIM_EVERY_MILLIS);
        TreeMap<Long, Long> appended = new TreeMap<>(); // seq → append ms, as the script answered
        int trims = 0;
        int trimsInTheMiddle = 0;
        // at least 1.8 s and 100 publishes, however slow a busy machine makes each round trip
        long start = System.nanoTime();
        long deadline = start + Duration.ofMillis(1800).toNanos();
        long giveUp = start + Duration.ofSeconds(20).toNanos();
        while ((System.nanoTime() < deadline || appended.size() <= 100) && System.nanoTime() < giveUp) {
            String dueBefore = commands.hget("push:{aged}:m", "n");
            long firstBefore = firstKept("aged");
            List<Object> r = publish("aged", 1_000_000, age);
            long seq = Long.parseLong((String) r.get(1));
            long ts = (Long) r.get(3);
            appended.put(seq, ts);
            long first = firstKept("aged");
            if (!commands.hget("push:{aged}:m", "n").equals(dueBefore)) { // the script looked at the age
                trims++;
                long expected = appended.entrySet().stream().filter(e -> e.getValue() >= ts - age)
                        .mapToLong(java.util.Map.Entry::getKey).min().orElseThrow();
                assertThat(first).as("after the look at seq %d (t=%d)", seq, ts).isEqualTo(expected);
                if (first > firstBefore && first < seq) {
                    trimsInTheMiddle++;
                }
            } else {
                assertThat(first).as("no look, no trim (seq %d)", seq).isEqualTo(Math.max(firstBefore, 1));
            }
            // never more than one interval past the age
            assertThat(appended.get(first)).as("first kept at seq %d", seq).isGreaterThan(ts - age - every);
            assertThat(commands.xlen("push:{aged}:s")).as("nothing between the first kept and the head is lost")
                    .isEqualTo(seq - first + 1);
            Thread.sleep(3);
        }
        assertThat(appended.size()).as("publishes").isGreaterThan(100);
        long elapsedMillis = Duration.ofNanos(System.nanoTime() - start).toMillis();
        assertThat(trims).as("looks at the age, one per interval at most").isBetween(2, (int) (elapsedMillis / every) + 1);
        assertThat(trimsInTheMiddle).as("looks that cut the stream between its first event and the new one")
                .isGreaterThanOrEqualTo(1);
    }

    @Test
    void aTopicWhoseEventsAreYoungerThanTheAgeIsNotReadOnEveryPublish() {
        commands.configResetstat();
        for (int i = 0; i < 1000; i++) {
            publish("busy", 1_000_000, 60_000);
        }
        String stats = commands.info("commandstats");
        assertThat(stats).contains("cmdstat_eval:calls=1000,");
        // the first publish looks once (its own event: young); the next look is due in a minute
        assertThat(stats).contains("cmdstat_xrange:calls=1,").doesNotContain("cmdstat_xtrim");
        assertThat(commands.xlen("push:{busy}:s")).isEqualTo(1000);
    }

    @Test
    void retentionByCountStillTrimsOnEveryPublishAndKeepsTheNewestEventsWithoutAHole() {
        for (int i = 0; i < 1000; i++) {
            publish("counted", 50, 60_000);
        }
        long len = commands.xlen("push:{counted}:s");
        // MAXLEN ~ drops whole macro nodes (stream-node-max-entries, 100 by default)
        assertThat(len).isBetween(50L, 150L);
        assertThat(firstKept("counted")).isEqualTo(1000 - len + 1);
    }

    @Test
    void aNodeLoadingATopicTrimmedByAgeReportsTheFirstKeptEventAndSaysExpiredToAClientFromBefore()
            throws Exception {
        for (int i = 0; i < 20; i++) {
            publish("old", 1_000_000, 200);
        }
        Thread.sleep(300);
        publish("old", 1_000_000, 200); // its look is due: 1..20 are older than 200 ms
        assertThat(firstKept("old")).isEqualTo(21);
        node = TestServers.start(TestServers.config(Files.createDirectories(dir.resolve("node")))
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2))));
        try (WsClient c = WsClient.connect(node.port(), "topic=old@ep1-5")) {
            JsonNode subscribed = c.next();
            assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
            assertThat(subscribed.path("oldest").asText()).isEqualTo("ep1-21");
            JsonNode reset = c.next();
            assertThat(reset.path("type").asText()).isEqualTo("reset");
            assertThat(reset.path("reason").asText()).isEqualTo("expired");
            assertThat(reset.path("id").asText()).isEqualTo("ep1-21");
            assertThat(Http.publish(node.port(), "old", "{\"n\":22}").status()).isEqualTo(201);
            assertThat(c.next().path("id").asText()).isEqualTo("ep1-22");
        }
        try (WsClient c = WsClient.connect(node.port(), "topic=old@ep1-20")) {
            assertThat(c.next().path("type").asText()).isEqualTo("subscribed");
            JsonNode first = c.next();
            assertThat(first.path("id").asText()).as("just before the oldest kept: a replay, no reset")
                    .isEqualTo("ep1-21");
        }
    }
}
