package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.testing.Http;
import io.pushd.server.testing.ServerProcess;
import io.pushd.server.testing.ServerProcesses;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server ({@code java -jar}) when it cannot start, or is stopped while starting: one
 * line on stderr and an exit code a supervisor can act on (2: fix the configuration, 1: retrying
 * may help), never a stack trace; and nothing left behind that would cost the history: the data
 * directory is neither locked nor marked as running afterwards (a marker left behind would make
 * the next start after a reboot throw the history away, as after a crash).
 */
class StartupFailureIT {

    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(30);

    @RegisterExtension
    final ServerProcesses servers = new ServerProcesses();

    @TempDir
    Path tmp;

    @AfterEach
    void kill() throws InterruptedException {
        servers.killAll();
    }

    @Test
    void aSecondServerOnTheSameDataDirectoryExitsWithOneLineAndTheFirstKeepsItsEvents() throws Exception {
        Path data = tmp.resolve("data");
        ServerProcess first = servers.start(tmp.resolve("a"), ServerProcess.freePort(), data);
        assertThat(Http.publish(first.port(), "t", "{\"n\":1}").status()).isEqualTo(201);

        try (ServerProcess second = ServerProcess.launch(tmp.resolve("b"), ServerProcess.freePort(), data)) {
            assertThat(second.awaitExit(EXIT_TIMEOUT)).isEqualTo(1);
            assertThat(second.output())
                    .contains("start failed: data directory " + data + " is in use by another server (pid "
                            + first.pid() + ")")
                    .doesNotContain("\tat ");
        }
        assertThat(Http.publish(first.port(), "t", "{\"n\":2}").body()).contains("-2\"");
        assertThat(Http.get(first.port(), "/v1/topics/t/events?after=" + epoch(first) + "-0").body())
                .contains("\"n\":1").contains("\"n\":2");
    }

    @Test
    void aPortInUseExitsWithOneLineAndLeavesTheDataDirectoryFreeAndNotMarkedRunning() throws Exception {
        Path data = tmp.resolve("data");
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             ServerProcess server = ServerProcess.launch(tmp.resolve("a"), taken.getLocalPort(), data)) {
            assertThat(server.awaitExit(EXIT_TIMEOUT)).isEqualTo(1);
            assertThat(server.output()).contains("start failed: ").contains("Address already in use")
                    .doesNotContain("\tat ");
        }
        assertThat(data.resolve("running")).doesNotExist();
        ServerProcess next = servers.start(tmp.resolve("b"), ServerProcess.freePort(), data); // not locked
        assertThat(Http.publish(next.port(), "t", "{}").status()).isEqualTo(201);
    }

    @Test
    void aKeyFileThatCannotBeUsedExitsTwoWithOneLineNamingTheKey() throws Exception {
        Path jwks = tmp.resolve("keys.jwks");
        Files.writeString(jwks, "{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2hvcnQ\"}]}"); // a 5-byte secret
        try (ServerProcess server = ServerProcess.launch(tmp.resolve("a"), ServerProcess.freePort(),
                tmp.resolve("data"), "auth.mode=jwt", "auth.jwt.jwksFile=" + jwks)) {
            assertThat(server.awaitExit(EXIT_TIMEOUT)).isEqualTo(2); // the unit file's RestartPreventExitStatus
            assertThat(server.output()).contains("configuration error: auth.jwt.jwksFile: " + jwks)
                    .doesNotContain("\tat ").doesNotContain("c2hvcnQ");
        }
        assertThat(tmp.resolve("data").resolve("running")).doesNotExist();
    }

    @Test
    void aSigtermWhileStartingStopsCleanlyOnceStarted() throws Exception {
        Path data = tmp.resolve("data");
        try (ServerProcess server = ServerProcess.launch(tmp.resolve("a"), ServerProcess.freePort(), data,
                "store.replayWarmup=true")) {
            // The store writes the marker when it opens; the replay warm-up and the bind come after
            // it, so the signal lands during the start.
            long deadline = System.nanoTime() + EXIT_TIMEOUT.toNanos();
            while (!Files.exists(data.resolve("running")) && System.nanoTime() < deadline) {
                Thread.sleep(2);
            }
            assertThat(data.resolve("running")).exists();
            server.sigterm();
            assertThat(server.awaitExit(EXIT_TIMEOUT)).isZero();
            assertThat(server.output()).doesNotContain("\tat ");
        }
        assertThat(data.resolve("running")).doesNotExist(); // a clean stop: a reboot keeps the history
    }

    @Test
    void thePackagedServerWarmsUpItsReplayAndLivePathsBeforeItIsReadyAndKeepsNothingOfThem() throws Exception {
        Path data = tmp.resolve("data");
        ServerProcess server = servers.start(tmp.resolve("a"), ServerProcess.freePort(), data, "fanout.warmup=true",
                "store.replayWarmup=true"); // the defaults, which ServerProcess turns off
        String out = server.output();
        assertThat(out).contains("live warm-up: 3000 events published to 100 subscribers in ");
        assertThat(out.indexOf("replay warm-up: ")).as("the replay warm-up, before the live one")
                .isPositive().isLessThan(out.indexOf("live warm-up: "));
        assertThat(data.resolve("replay-warmup")).doesNotExist();
        assertThat(out.indexOf("live warm-up: ")).as("before the server is ready")
                .isLessThan(out.indexOf("push server ready on "));
        assertThat(out).as("the scratch server says nothing of its own start")
                .containsOnlyOnce("push server ready on ").containsOnlyOnce("TCP connection caps: ");
        assertThat(data.resolve("live-warmup")).doesNotExist();
        assertThat(Http.publish(server.port(), "t", "{\"n\":1}").body()).contains("-1\"");
        assertThat(Http.get(server.port(), "/v1/topics/warmup").body()).as("no warm-up topic in its history")
                .contains("\"head\":null");
    }

    private static String epoch(ServerProcess server) {
        String info = Http.get(server.port(), "/v1/topics/t").body();
        return info.replaceAll(".*\"epoch\":\"([0-9a-z]+)\".*", "$1");
    }
}
