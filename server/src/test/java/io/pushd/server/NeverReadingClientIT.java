package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.testing.Http;
import io.pushd.server.testing.ServerProcess;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server under clients that pipeline requests and never read the answers: its
 * resident memory stays flat and {@code /healthz} answers meanwhile. Before backpressure, 3 s of
 * pipelined {@code /healthz} grew it by ~600 MB, of {@code /metrics} by ~2 GB.
 */
class NeverReadingClientIT {

    /** Generous: JIT and heap growth; a flood used to add 3-10 times this in three seconds. */
    private static final long MAX_RSS_GROWTH_MB = 200;

    @TempDir
    Path work;

    @Test
    void pipelinedRequestsThatAreNeverReadLeaveTheServersResidentMemoryFlat() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, ServerProcess.freePort(), work.resolve("data"))) {
            Http.get(server.port(), "/metrics"); // warm up what a scrape allocates once
            long before = rssMegabytes(server.pid());
            for (String path : new String[] {"/healthz", "/metrics"}) {
                String request = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
                try (Socket s = new Socket()) {
                    s.setReceiveBufferSize(4096);
                    s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
                    long sent = NeverReadingClientTest.flood(s, request.repeat(1_000).getBytes(StandardCharsets.US_ASCII));
                    assertThat(Http.get(server.port(), "/healthz").status()).isEqualTo(200);
                    long rss = rssMegabytes(server.pid());
                    System.out.printf("%s flood: %,d requests sent, server RSS %d MB -> %d MB%n", path,
                            sent / request.length(), before, rss);
                    assertThat(rss - before).as("RSS growth (MB) after pipelined %s", path)
                            .isLessThan(MAX_RSS_GROWTH_MB);
                }
            }
        }
    }

    private static long rssMegabytes(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024;
            }
        }
        throw new IllegalStateException("no VmRSS for " + pid);
    }
}
