package io.pushd.server;

import io.pushd.server.config.Limits;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.internal.PlatformDependent;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.RawWebSocket;
import io.pushd.server.testing.TestServers;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client that sends as fast as the kernel takes it and never reads the answers must not grow
 * the server: reading from it pauses once its answers back up. Memory is measured in-process
 * (heap after a full GC plus Netty's direct memory). Before backpressure, three seconds of such a
 * client grew the server by hundreds of megabytes (pipelined /metrics: +2.1 GB RSS from 1 MB sent).
 * Small answers ({@code /healthz}) are measured on the packaged server in {@link NeverReadingClientIT}:
 * with paranoid leak detection this in-process server is too slow to pile up many of them.
 */
class NeverReadingClientTest {

    /** Generous: what a flood left behind before was 10-100 times this. */
    private static final long MAX_GROWTH_BYTES = 48L << 20;
    private static final Duration FLOOD = Duration.ofSeconds(3);

    @TempDir
    Path dataDir;
    PushServer server;

    private void start(Limits limits) throws Exception {
        ServerConfig c = TestServers.config(dataDir);
        server = TestServers.start(c.withLimits(limits));
    }

    private static Limits limits(Duration slowConsumerTimeout) {
        // pings are not what the inbound rate limit is tested with here: backpressure alone must hold
        return ServerConfig.defaults().limits().toBuilder().slowConsumerTimeout(slowConsumerTimeout)
                .maxInboundMessagesPerSecond(1_000_000).permessageDeflate(false).build();
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void pipelinedMetricsRequestsThatAreNeverReadLeaveMemoryFlatAndHealthzAnswers() throws Exception {
        start(limits(Duration.ofSeconds(30)));
        floodHttp("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    }

    @Test
    void anHttpConnectionWhoseAnswersStayUnreadIsClosedAfterTheSlowConsumerTimeout() throws Exception {
        start(limits(Duration.ofMillis(500)));
        try (Socket s = unreadSocket()) {
            s.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".repeat(2_000)
                    .getBytes(StandardCharsets.US_ASCII));
            assertThat(awaitTcpConnections(0, Duration.ofSeconds(10)))
                    .as("the server closed the connection whose answers were not read").isZero();
        }
    }

    @Test
    void aPingFloodFromAWebSocketThatNeverReadsItsPongsLeavesMemoryFlat() throws Exception {
        start(limits(Duration.ofSeconds(30)));
        long before = usedMemory();
        try (RawWebSocket ws = RawWebSocket.open(server.port(), "topic=t", 4096)) {
            byte[] ping = new byte[2 + 4 + 125]; // masked, 125-byte payload: the largest control frame
            ping[0] = (byte) 0x89;
            ping[1] = (byte) (0x80 | 125);
            byte[] chunk = new byte[ping.length * 500];
            for (int i = 0; i < 500; i++) {
                System.arraycopy(ping, 0, chunk, i * ping.length, ping.length);
            }
            long sent = flood(ws.socket, chunk);
            assertThat(Http.get(server.port(), "/healthz").status()).isEqualTo(200);
            long growth = usedMemory() - before;
            System.out.printf("ping flood: %,d bytes sent, server memory grew by %,d bytes%n", sent, growth);
            assertThat(growth).as("memory growth after %,d bytes of pings", sent).isLessThan(MAX_GROWTH_BYTES);
            assertThat(ws.socket.isClosed()).isFalse();
        }
    }

    @Test
    void replayingLargeEventsToClientsThatNeverReadHoldsAboutTheWriteBufferPerClient() throws Exception {
        start(limits(Duration.ofSeconds(30)));
        String pad = "x".repeat(60_000);
        for (int i = 0; i < 300; i++) { // 18 MB kept
            assertThat(Http.publish(server.port(), "big", "{\"i\":" + i + ",\"pad\":\"" + pad + "\"}").status())
                    .isEqualTo(201);
        }
        long before = usedMemory();
        int clients = 8;
        java.util.List<RawWebSocket> open = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                open.add(RawWebSocket.open(server.port(), "topic=big@" + server.epoch() + "-0", 4096));
            }
            Thread.sleep(1_500); // the replays run until each connection is unwritable
            long growth = usedMemory() - before;
            System.out.printf("replay of 60 kB events to %d clients that never read: server memory grew by %,d bytes%n",
                    clients, growth);
            // a read of 256 events is 15 MB: before, every such client held about that
            assertThat(growth).as("memory growth with %d clients that never read a replay", clients)
                    .isLessThan(clients * (3L << 20));
            assertThat(Http.get(server.port(), "/healthz").status()).isEqualTo(200);
        } finally {
            for (RawWebSocket ws : open) {
                ws.close();
            }
        }
    }

    private void floodHttp(String request) throws Exception {
        Http.get(server.port(), "/metrics"); // warm up what a scrape allocates once
        long before = usedMemory();
        try (Socket s = unreadSocket()) {
            byte[] chunk = request.repeat(1_000).getBytes(StandardCharsets.US_ASCII);
            long sent = flood(s, chunk);
            // while the flood's connection is still open, others are served
            assertThat(Http.get(server.port(), "/healthz").status()).isEqualTo(200);
            long growth = usedMemory() - before;
            System.out.printf("%s flood: %,d requests sent, server memory grew by %,d bytes%n",
                    request.substring(0, request.indexOf(' ', 4)), sent / request.length(), growth);
            assertThat(growth).as("memory growth after %,d pipelined requests", sent / request.length())
                    .isLessThan(MAX_GROWTH_BYTES);
        }
    }

    private Socket unreadSocket() throws IOException {
        Socket s = new Socket();
        s.setReceiveBufferSize(4096); // small: the answers back up at once
        s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
        return s;
    }

    /** Writes {@code chunk} over and over for {@link #FLOOD} (blocked writes included); returns bytes sent. */
    static long flood(Socket s, byte[] chunk) throws InterruptedException {
        AtomicLong sent = new AtomicLong();
        Thread writer = new Thread(() -> {
            try {
                OutputStream out = s.getOutputStream();
                while (!Thread.currentThread().isInterrupted()) {
                    out.write(chunk);
                    sent.addAndGet(chunk.length);
                }
            } catch (IOException closed) {
                // the server closed it, or the test did
            }
        }, "flood");
        writer.setDaemon(true);
        writer.start();
        writer.join(FLOOD.toMillis());
        writer.interrupt(); // a blocked write stays blocked until the socket closes
        return sent.get();
    }

    private int awaitTcpConnections(int expected, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        int n;
        while ((n = tcpConnections()) != expected && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        return n;
    }

    private int tcpConnections() {
        return (int) server.metrics().registry().get("push.tcp.connections").gauge().value();
    }

    /** Heap after a full collection plus Netty's direct memory: what the server holds on to. */
    private static long usedMemory() {
        for (int i = 0; i < 2; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() + PlatformDependent.usedDirectMemory();
    }
}
