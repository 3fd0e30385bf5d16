package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.Scrape;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fanout.warmup}: the start-up run of publishes and fan-out on a scratch server leaves nothing behind. */
class LiveWarmupTest {

    @TempDir
    Path dataDir;

    private ServerConfig withWarmup() {
        ServerConfig c = TestServers.config(dataDir);
        return c.withFanout(c.fanout().withWarmup(true));
    }

    @Test
    void theWarmupPublishesOverHttpAndFansOutToEverySubscriberOverRealSockets() throws Exception {
        ServerConfig c = withWarmup();
        Path dir = dataDir.resolve(LiveWarmup.DIRECTORY);
        LiveWarmup.Result r = LiveWarmup.run(c, dir, 400);

        assertThat(r.published()).as("every publish answered 2xx").isEqualTo(400);
        // 350 of the 400 go to the crowded topic's 96 subscribers, each frame more than 100 bytes;
        // the first few may come before every subscription is registered
        assertThat(r.deliveredBytes()).as("the subscribers received the fan-out")
                .isGreaterThan(300L * LiveWarmup.SUBSCRIBERS * 100);
        assertThat(dir).as("the scratch server's directory is deleted").doesNotExist();
    }

    @Test
    void aServerThatWarmsUpItsLivePathStartsWithNoTraceOfItAndServesItsOwnTopicsExactly() throws Exception {
        PushServer server = TestServers.start(withWarmup());
        try {
            try (var files = Files.list(dataDir)) {
                assertThat(files.map(p -> p.getFileName().toString())).doesNotContain(LiveWarmup.DIRECTORY);
            }
            String scrape = Http.get(server.port(), "/metrics").body();
            assertThat(Scrape.sum(scrape, "push_events_published_total")).as("the warm-up's metrics are its own")
                    .isZero();
            assertThat(Scrape.sum(scrape, "push_frames_delivered_total")).isZero();
            assertThat(Scrape.sum(scrape, "push_subscriptions")).isZero();
            assertThat(Scrape.sum(scrape, "push_topics")).as("no warm-up topic in the server's history").isZero();
            assertThat(server.store().range(LiveWarmup.TOPIC).head()).isZero();
            assertThat(server.store().range(LiveWarmup.FEW_TOPIC).head()).isZero();

            try (WsClient ws = WsClient.connect(server.port(), "topic=t&after=" + server.epoch() + "-0")) {
                assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
                for (int i = 1; i <= 50; i++) {
                    assertThat(Http.publish(server.port(), "t", "{\"n\":" + i + "}").status()).isEqualTo(201);
                }
                List<JsonNode> events = ws.awaitEvents(50, Duration.ofSeconds(10));
                assertThat(events).extracting(e -> e.path("data").path("n").asInt())
                        .containsExactlyElementsOf(IntStream.rangeClosed(1, 50).boxed().toList());
                assertThat(events.get(0).path("id").asText()).as("the server's own sequence starts at 1")
                        .isEqualTo(server.epoch() + "-1");
            }
        } finally {
            server.close();
        }
    }

    @Test
    void aLeftoverScratchDirectoryOfAKilledStartIsReplacedAndDeleted() throws Exception {
        Path leftover = dataDir.resolve(LiveWarmup.DIRECTORY);
        Files.createDirectories(leftover.resolve("log"));
        Files.writeString(leftover.resolve("log").resolve("20270115-08F.cq4"), "not a queue file");
        PushServer server = TestServers.start(withWarmup());
        try {
            assertThat(leftover).doesNotExist();
        } finally {
            server.close();
        }
    }

    @Test
    void theScratchServerKeepsTheOperatorsShapeButListensOnLoopbackWithoutAuthOrItsOwnWarmups() {
        ServerConfig c = withWarmup();
        ServerConfig s = LiveWarmup.scratchConfig(c, dataDir.resolve(LiveWarmup.DIRECTORY));
        assertThat(s.server().host()).isEqualTo("127.0.0.1");
        assertThat(s.server().port()).isZero();
        assertThat(s.server().adminPort()).isNull();
        assertThat(s.server().ioThreads()).isEqualTo(c.server().ioThreads());
        assertThat(s.server().transport()).isEqualTo(c.server().transport());
        assertThat(s.store().dataDir()).isEqualTo(dataDir.resolve(LiveWarmup.DIRECTORY).toString());
        assertThat(s.store().replayWarmup()).isFalse();
        assertThat(s.fanout().warmup()).as("no warm-up of its own").isFalse();
        assertThat(s.fanout().coalesceWindow()).isEqualTo(c.fanout().coalesceWindow());
        assertThat(s.limits()).isEqualTo(c.limits());
        assertThat(s.reconnect().rampAfterStart()).isFalse();
        assertThat(s.cluster().enabled()).isFalse();
    }
}
