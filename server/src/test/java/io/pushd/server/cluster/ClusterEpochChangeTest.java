package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.EventId;
import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A topic's history in Redis replaced (lost, then a new epoch started by another node) while
 * this node reads it: whatever this node sends is labelled with the epoch of the history the
 * events are of. The replacement is made at a chosen moment through the applier's seam.
 */
class ClusterEpochChangeTest {

    @TempDir
    Path dir;
    RedisProcess redis;
    PushServer node;

    @BeforeEach
    void start() throws Exception {
        redis = RedisProcess.start(dir);
        node = TestServers.start(TestServers.config(Files.createDirectories(dir.resolve("a")))
                .withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2))));
    }

    @AfterEach
    void stop() throws Exception {
        node.close();
        redis.close();
    }

    /**
     * Stores one event with the nodes' own script, announced nowhere (the node learns of it by its
     * periodic check); {@code newEpoch} is the epoch the script starts when the topic has none.
     */
    private void storeSilently(String topic, String newEpoch, String json) throws Exception {
        String meta = "push:{" + topic + "}:m";
        redis.cli("EVAL", Scripts.PUBLISH, "3", meta, "push:{" + topic + "}:s", meta,
                json, "100000", "0", newEpoch, "", "0", "", "push:{" + topic + "}:nowhere", "PUBLISH");
    }

    @Test
    void aHistoryReplacedBetweenTheBackfillsEpochAndItsPageIsAResetNeverTheNewEventsUnderTheOldEpoch()
            throws Exception {
        try (WsClient client = WsClient.connect(node.port(), "topic=swap")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            storeSilently("swap", "unused", "{\"h\":\"old\",\"n\":1}");
            storeSilently("swap", "unused", "{\"h\":\"old\",\"n\":2}");
            List<JsonNode> first = client.awaitEvents(2, Duration.ofSeconds(5)); // the periodic check's backfill
            String old = EventId.parse(first.get(1).path("id").asText()).epoch();

            AtomicBoolean replaced = new AtomicBoolean();
            CountDownLatch oldStored = new CountDownLatch(1);
            ((RedisHistory) node.history()).beforePageRead = topic -> {
                if (topic.equals("swap") && replaced.compareAndSet(false, true)) {
                    try { // after the backfill read Redis' epoch and head (old, 4), before its page
                        // The seam runs on the applier while this test's thread may still be storing
                        // old 3 and 4 (a page read of the first backfill can come first): a store
                        // between the DEL and the new history's first would start that history itself.
                        if (!oldStored.await(10, TimeUnit.SECONDS)) {
                            throw new IllegalStateException("old 3 and 4 not stored within 10 s");
                        }
                        redis.cli("DEL", "push:{swap}:m", "push:{swap}:s");
                        for (int n = 1; n <= 6; n++) {
                            storeSilently("swap", "second", "{\"h\":\"new\",\"n\":" + n + "}");
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            };
            storeSilently("swap", "unused", "{\"h\":\"old\",\"n\":3}");
            storeSilently("swap", "unused", "{\"h\":\"old\",\"n\":4}");
            oldStored.countDown();

            List<String> got = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!got.contains("event second-6 new") && System.nanoTime() < deadline) {
                JsonNode m = client.messages.poll(200, TimeUnit.MILLISECONDS);
                if (m != null) {
                    got.add(m.path("type").asText() + " " + m.path("id").asText()
                            + (m.has("data") ? " " + m.path("data").path("h").asText() : ""));
                }
            }
            assertThat(replaced).as("the seam ran").isTrue();
            assertThat(got).as("no event of the new history under the old epoch")
                    .noneMatch(s -> s.startsWith("event " + old + "-"));
            assertThat(got).containsExactly("reset second-0", "event second-1 new", "event second-2 new",
                    "event second-3 new", "event second-4 new", "event second-5 new", "event second-6 new");
        }
    }

    @Test
    void aHistoryReplacedWhileTheNodeLoadsTheTopicIsLoadedWholeNeverTheOldHeadWithTheNewOldest() throws Exception {
        for (int n = 1; n <= 5; n++) {
            storeSilently("fresh", "first", "{\"n\":" + n + "}");
        }
        redis.cli("XTRIM", "push:{fresh}:s", "MINID", "3-0"); // the first history keeps 3..5
        AtomicBoolean replaced = new AtomicBoolean();
        ((RedisHistory) node.history()).beforePageRead = topic -> {
            if (topic.equals("fresh") && replaced.compareAndSet(false, true)) {
                try { // after the load read Redis' epoch and head (first, 5), before the oldest kept
                    redis.cli("DEL", "push:{fresh}:m", "push:{fresh}:s");
                    storeSilently("fresh", "second", "{\"n\":1}");
                    storeSilently("fresh", "second", "{\"n\":2}");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        try (WsClient client = WsClient.connect(node.port(), "topic=fresh")) {
            JsonNode subscribed = client.next();
            assertThat(replaced).as("the seam ran").isTrue();
            assertThat(subscribed.path("type").asText()).isEqualTo("subscribed");
            assertThat(subscribed.path("head").asText() + " " + subscribed.path("oldest").asText())
                    .as("head and oldest of one history").isEqualTo("second-2 second-1");
        }
    }
}
