package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.protocol.CloseCode;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.SseStream;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A single node's drain sends its clients back only once a restart would be over: its next
 * process can serve only after this one has exited and it has started, and a client hinted back
 * earlier finds no server and backs off for longer (seen: the last of 1,000 back 70 s after a
 * graceful restart that took 11 s).
 */
class DrainAfterStartTest {

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
    void aSingleNodesReturnsBeginAfterItsOwnLaunchAndStartAndItsExit() throws Exception {
        ServerConfig c = TestServers.config(dir);
        long t0 = System.nanoTime();
        server = PushServer.start(c.withDrain(c.drain().withExpectRestart(true)), Duration.ofMillis(1_500));
        long startMillis = (System.nanoTime() - t0) / 1_000_000;

        long after = server.returnsAfterMillis();
        assertThat(after).as("the launch (1.5 s), the start (%d ms here) and 6 s for the closes and the exit",
                startMillis).isBetween(1_500 + PushServer.EXIT_ALLOWANCE_MILLIS,
                1_500 + startMillis + PushServer.EXIT_ALLOWANCE_MILLIS);
        assertThat(hintOfADrainedClient()).as("hint, ms")
                .isBetween(after, after + ServerConfig.Drain.DEFAULT_MIN_WINDOW.toMillis());
    }

    @Test
    void aRestartThatWouldTakeLongerThanAMinuteIsWaitedForAMinute() throws Exception {
        ServerConfig c = TestServers.config(dir);
        server = PushServer.start(c.withDrain(c.drain().withExpectRestart(true)), Duration.ofMinutes(5));

        assertThat(server.returnsAfterMillis()).isEqualTo(PushServer.MAX_RETURNS_AFTER_MILLIS);
    }

    @Test
    void withoutExpectRestartTheReturnsBeginAtOnce() throws Exception {
        ServerConfig c = TestServers.config(dir);
        server = PushServer.start(c.withDrain(c.drain().withExpectRestart(false)), Duration.ofMillis(1_500));

        assertThat(server.returnsAfterMillis()).isZero();
        assertThat(hintOfADrainedClient()).isBetween(0L, ServerConfig.Drain.DEFAULT_MIN_WINDOW.toMillis());
    }

    @Test
    void aStreamThatArrivesDuringASingleNodesDrainIsSentPastTheRestartToo() throws Exception {
        ServerConfig c = TestServers.config(dir);
        server = PushServer.start(c.withDrain(c.drain().withExpectRestart(true)), Duration.ofMillis(1_500));
        long after = server.returnsAfterMillis();
        try (SseStream held = SseStream.open(server.port(), "topic=t")) {
            Thread drain = new Thread(server::drain, "drain");
            drain.start();
            assertThat(held.closeEvent(Duration.ofSeconds(20))[0]).isEqualTo(CloseCode.SERVICE_RESTART.code());
            // the drain now waits for the held stream's connection: a stream asked for meanwhile
            try (SseStream late = SseStream.open(server.port(), "topic=t")) {
                long[] close = late.closeEvent(Duration.ofSeconds(20));
                assertThat(close[0]).isEqualTo(CloseCode.SERVICE_RESTART.code());
                assertThat(close[1]).as("hint, ms").isBetween(after,
                        after + ServerConfig.Drain.DEFAULT_MIN_WINDOW.toMillis());
            }
            held.close();
            drain.join(30_000);
        }
    }

    /** Drains the server with one subscriber on it; returns the retry hint of its 1012. */
    private long hintOfADrainedClient() throws Exception {
        try (WsClient client = WsClient.connect(server.port(), "topic=t")) {
            assertThat(client.next().path("type").asText()).isEqualTo("subscribed");
            Thread drain = new Thread(server::drain, "drain");
            drain.start();
            assertThat(client.awaitClose(Duration.ofSeconds(20))).isEqualTo(CloseCode.SERVICE_RESTART.code());
            OptionalLong hint = CloseCode.parseRetryMs(client.closeReason());
            assertThat(hint).as("retry hint in '%s'", client.closeReason()).isPresent();
            drain.join(30_000);
            return hint.getAsLong();
        }
    }
}
