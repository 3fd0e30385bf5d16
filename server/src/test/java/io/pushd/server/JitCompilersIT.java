package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.testing.Http;
import io.pushd.server.testing.ServerProcess;
import io.pushd.server.testing.ServerProcesses;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server says at start which JIT compilers it runs with when it is not HotSpot's
 * default (README, Performance: C1 only), and warns when that would make TLS on the daemon
 * expensive; with the default it says nothing.
 */
class JitCompilersIT {

    private static final List<String> C1_ONLY = List.of("-XX:TieredStopAtLevel=1");
    private static final String LINE = "JIT: C1 only";

    @RegisterExtension
    final ServerProcesses servers = new ServerProcesses();

    @TempDir
    Path tmp;

    @AfterEach
    void kill() throws InterruptedException {
        servers.killAll();
    }

    @Test
    void withC1OnlyTheStartSaysSoAndServes() throws Exception {
        ServerProcess server = servers.start(tmp.resolve("a"), ServerProcess.freePort(), tmp.resolve("data"), C1_ONLY);
        assertThat(server.output()).contains("INFO").contains(LINE).doesNotContain("TLS on the daemon");
        assertThat(Http.get(server.port(), "/readyz").status()).isEqualTo(200);
    }

    @Test
    void withC1OnlyAndTlsOnTheDaemonTheStartWarns() throws Exception {
        Path cert = tmp.resolve("cert.pem");
        Path key = tmp.resolve("key.pem");
        TlsAndAdminPortTest.makeCertificate(cert, key, "127.0.0.1");
        // launched, not started: its /readyz is https, which the helper's probe does not speak
        ServerProcess server = servers.launch(tmp.resolve("a"), ServerProcess.freePort(), tmp.resolve("data"), C1_ONLY,
                "tls.certFile=" + cert, "tls.keyFile=" + key);
        String log = awaitLine(server, "push server ready");
        assertThat(log).containsPattern("WARN .*" + LINE + ".*TLS on the daemon \\(tls.certFile\\) costs ~12x");
    }

    @Test
    void withTheDefaultJitTheStartSaysNothingOfIt() throws Exception {
        ServerProcess server = servers.start(tmp.resolve("a"), ServerProcess.freePort(), tmp.resolve("data"));
        assertThat(server.output()).contains("effective configuration").doesNotContain("JIT: ");
    }

    private static String awaitLine(ServerProcess server, String text) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            String log = server.output();
            if (log.contains(text)) {
                return log;
            }
            assertThat(server.isAlive()).as("server alive; log:\n%s", log).isTrue();
            Thread.sleep(100);
        }
        throw new AssertionError("no '" + text + "' within 30 s; log:\n" + server.output());
    }
}
