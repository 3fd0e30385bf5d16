package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Events near {@code limits.maxPublishBytes}' ceiling (16 MiB) are replayed like small ones: the
 * replay sizes its first buffer for a read of 256 events of the first one's size, which for an
 * event of 9 MiB is more than an int holds.
 */
class LargeEventReplayTest {

    @TempDir
    Path dir;
    PushServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aClientResumingJustBeforeAnEventOfNineMebibytesGetsItAndTheEventsAfterIt() throws Exception {
        server = TestServers.start(TestServers.config(dir).withLimits(
                TestServers.config(dir).limits().toBuilder().maxPublishBytes(16 << 20).build()));
        String big = "x".repeat(9 << 20);
        assertThat(Http.publish(server.port(), "t", "{\"n\":1}").status()).isEqualTo(201);
        assertThat(Http.publish(server.port(), "t", "{\"s\":\"" + big + "\"}").status()).isEqualTo(201);
        assertThat(Http.publish(server.port(), "t", "{\"n\":3}").status()).isEqualTo(201);

        try (WsClient c = WsClient.connect(server.port(), "topic=t@" + server.epoch() + "-1")) {
            assertThat(c.next().path("type").asText()).isEqualTo("subscribed");
            JsonNode two = c.next(Duration.ofSeconds(20));
            assertThat(two.path("type").asText()).as("not a close: %s", two).isEqualTo("event");
            assertThat(two.path("id").asText()).isEqualTo(server.epoch() + "-2");
            assertThat(two.path("data").path("s").asText()).hasSize(big.length());
            assertThat(c.next(Duration.ofSeconds(5)).path("id").asText()).isEqualTo(server.epoch() + "-3");
        }
    }
}
