package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.replay.ReplayWarmup;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.Scrape;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code store.replayWarmup}: the start-up replay of a scratch log leaves nothing of it behind. */
class ReplayWarmupTest {

    @TempDir
    Path dataDir;

    @Test
    void aServerThatWarmsUpItsReplayStartsWithNoTraceOfItAndReplaysItsOwnHistoryExactly() throws Exception {
        ServerConfig c = TestServers.config(dataDir);
        PushServer server = TestServers.start(c.withStore(c.store().withReplayWarmup(true)));
        try {
            assertThat(dataDir.resolve(ReplayWarmup.DIRECTORY)).as("the scratch store is deleted").doesNotExist();
            try (var files = Files.list(dataDir)) {
                assertThat(files.map(p -> p.getFileName().toString())).doesNotContain(ReplayWarmup.DIRECTORY);
            }
            String scrape = Http.get(server.port(), "/metrics").body();
            assertThat(Scrape.sum(scrape, "push_events_replayed_total")).as("the warm-up's metrics are its own").isZero();
            assertThat(Scrape.sum(scrape, "push_frames_delivered_total")).isZero();
            assertThat(Scrape.sum(scrape, "push_subscriptions")).isZero();
            assertThat(Scrape.sum(scrape, "push_topics")).as("no warm-up topic in the server's history").isZero();
            assertThat(server.store().range("warmup").head()).isZero();

            for (int i = 1; i <= 300; i++) {
                assertThat(Http.publish(server.port(), "t", "{\"n\":" + i + "}").status()).isEqualTo(201);
            }
            try (WsClient ws = WsClient.connect(server.port(), "topic=t&after=" + server.epoch() + "-0")) {
                assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
                List<JsonNode> events = ws.awaitEvents(300, Duration.ofSeconds(10));
                assertThat(events).extracting(e -> e.path("data").path("n").asInt())
                        .containsExactlyElementsOf(java.util.stream.IntStream.rangeClosed(1, 300).boxed().toList());
                assertThat(Http.publish(server.port(), "t", "{\"n\":301}").status()).isEqualTo(201);
                assertThat(ws.next().path("data").path("n").asInt()).as("then live, once").isEqualTo(301);
            }
        } finally {
            server.close();
        }
    }

    @Test
    void aServerThatWarmsUpCollectsTheWarmUpsGarbageBeforeItOpensItsPort() throws Exception {
        long before = fullCollections();
        ServerConfig c = TestServers.config(dataDir);
        PushServer server = TestServers.start(c.withStore(c.store().withReplayWarmup(true)));
        try {
            // System.gc() is a full collection with the serial, parallel and G1 collectors
            assertThat(fullCollections()).as("full collections during the start").isGreaterThan(before);
        } finally {
            server.close();
        }
    }

    /** Full (old generation) collections of this JVM so far, whichever collector it runs. */
    private static long fullCollections() {
        return java.lang.management.ManagementFactory.getGarbageCollectorMXBeans().stream()
                .filter(gc -> java.util.Set.of("MarkSweepCompact", "PS MarkSweep", "G1 Old Generation")
                        .contains(gc.getName()))
                .mapToLong(java.lang.management.GarbageCollectorMXBean::getCollectionCount).sum();
    }

    @Test
    void aLeftoverScratchStoreOfAKilledStartIsReplacedAndDeleted() throws Exception {
        Path leftover = dataDir.resolve(ReplayWarmup.DIRECTORY);
        Files.createDirectories(leftover.resolve("log"));
        Files.writeString(leftover.resolve("log").resolve("20270115-08F.cq4"), "not a queue file");
        ServerConfig c = TestServers.config(dataDir);
        PushServer server = TestServers.start(c.withStore(c.store().withReplayWarmup(true)));
        try {
            assertThat(leftover).doesNotExist();
        } finally {
            server.close();
        }
    }
}
