package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.pipeline.WebSocketSink;
import io.pushd.server.session.Session;
import io.pushd.server.sse.SseSink;
import io.pushd.server.testing.SseStream;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fanout.tcpNoDelay}: live connections send every write at once by default, and leave
 * Nagle's algorithm on (the kernel batches a subscriber's small writes under load) when it is off.
 */
class LiveSocketOptionsTest {

    @TempDir
    Path dir;

    @Test
    void liveConnectionsSendEveryWriteAtOnceByDefault() throws Exception {
        try (PushServer server = TestServers.start(TestServers.config(dir))) {
            assertThat(noDelayOfWebSocketAndSse(server)).containsExactly(true, true);
        }
    }

    @Test
    void withTcpNoDelayOffWebSocketAndSseConnectionsLeaveNaglesAlgorithmOn() throws Exception {
        ServerConfig config = TestServers.config(dir);
        config = config.withFanout(config.fanout().withTcpNoDelay(false));
        try (PushServer server = TestServers.start(config)) {
            assertThat(noDelayOfWebSocketAndSse(server)).containsExactly(false, false);
        }
    }

    /** TCP_NODELAY of the server's side of one WebSocket and one SSE stream. */
    private static List<Boolean> noDelayOfWebSocketAndSse(PushServer server) throws Exception {
        try (WsClient ws = WsClient.connect(server.port(), "topic=t");
             SseStream sse = SseStream.open(server.port(), "topic=t")) {
            ws.next(); // subscribed: the session is open
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (server.sessions().size() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            Boolean wsNoDelay = null;
            Boolean sseNoDelay = null;
            for (Session s : server.sessions().snapshot()) {
                if (s.sink() instanceof WebSocketSink w) {
                    wsNoDelay = noDelay(w.channel());
                } else if (s.sink() instanceof SseSink e) {
                    sseNoDelay = noDelay(e.channel());
                }
            }
            return java.util.Arrays.asList(wsNoDelay, sseNoDelay);
        }
    }

    private static Boolean noDelay(Channel ch) throws Exception {
        return ch.eventLoop().submit(() -> ch.config().getOption(ChannelOption.TCP_NODELAY)).get();
    }
}
