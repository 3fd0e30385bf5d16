package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.server.config.ConfigLoader;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code store.appendOnEventLoop}: where an idle writer's publish may run on the event loop it
 * came in on, and that a publish is stored, answered and delivered the same either way.
 */
class AppendOnEventLoopTest {

    @TempDir
    Path dir;

    private PushServer start(String name, java.util.function.UnaryOperator<ServerConfig.Store> store)
            throws InterruptedException {
        ServerConfig c = TestServers.config(dir.resolve(name));
        return TestServers.start(c.withStore(store.apply(c.store())));
    }

    @Test
    void onByDefaultOffWhenSetFalseFromTheFileKeyOrTheEnvironmentAndNeverWithFsync() throws Exception {
        assertThat(ConfigLoader.load(null, Map.of()).store().appendOnEventLoop()).isTrue();
        assertThat(ConfigLoader.load(null, ConfigLoader.fromEnvironment(Map.of("PUSH_STORE_APPEND_ON_EVENT_LOOP", "false")))
                .store().appendOnEventLoop()).isFalse();

        try (PushServer byDefault = start("default", s -> s)) {
            assertThat(byDefault.publisher().callerRuns()).isTrue();
        }
        try (PushServer off = start("off", s -> s.toBuilder().appendOnEventLoop(false).build())) {
            assertThat(off.publisher().callerRuns()).isFalse();
        }
        try (PushServer fsync = start("fsync", s -> s.withFsync(true))) {
            assertThat(fsync.publisher().callerRuns()).as("an msync per batch never runs on a loop").isFalse();
        }
    }

    @Test
    void publishesAreStoredAnsweredAndDeliveredInOrderWithTheLoopAppendingOrTheWriterThread() throws Exception {
        for (boolean onLoop : new boolean[] {true, false}) {
            try (PushServer server = start("s" + onLoop, s -> s.toBuilder().appendOnEventLoop(onLoop).build());
                 WsClient client = WsClient.connect(server.port(), "topic=t&after=")) {
                assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
                for (int i = 1; i <= 20; i++) {
                    Http.Response r = Http.publish(server.port(), "t", "{\"n\":" + i + "}");
                    assertThat(r.status()).as("publish %d, on the loop: %s", i, onLoop).isEqualTo(201);
                    assertThat(r.json().path("id").asText()).endsWith("-" + i);
                }
                List<JsonNode> events = client.awaitEvents(20, Duration.ofSeconds(10));
                assertThat(events.stream().filter(m -> m.path("type").asText().equals("event"))
                        .map(m -> m.path("data").path("n").asInt()).toList())
                        .containsExactlyElementsOf(java.util.stream.IntStream.rangeClosed(1, 20).boxed().toList());
            }
        }
    }
}
