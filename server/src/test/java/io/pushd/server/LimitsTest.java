package io.pushd.server;

import io.pushd.server.config.Limits;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.CloseCode;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.RawHttp;
import io.pushd.server.testing.RawWebSocket;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The limits that keep one client, or many, from hurting the others. */
class LimitsTest {

    @TempDir
    Path dataDir;
    PushServer server;
    final List<AutoCloseable> clients = new ArrayList<>();

    private PushServer start(UnaryOperator<ServerConfig> tweak) throws Exception {
        server = TestServers.start(tweak.apply(TestServers.config(dataDir)));
        return server;
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : clients) {
            c.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static Limits limits(ServerConfig c, int maxConnections, int maxPerIp, int handshakesPerSecond,
                                              Duration handshakeTimeout, Duration slowConsumer, int inboundPerSecond) {
        return c.limits().toBuilder().maxConnections(maxConnections).maxConnectionsPerIp(maxPerIp)
                .maxHandshakesPerSecond(handshakesPerSecond).handshakeTimeout(handshakeTimeout)
                .slowConsumerTimeout(slowConsumer).maxInboundMessagesPerSecond(inboundPerSecond)
                .permessageDeflate(false).build();
    }

    @Test
    void connectionsOverMaxConnectionsAreClosedWith1013AndAHintWhileTheFirstKeepWorking() throws Exception {
        start(c -> c.withLimits(limits(c, 50, 1000, 10_000, Duration.ofSeconds(10), Duration.ofSeconds(30), 100)));
        List<WsClient> all = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            WsClient ws = WsClient.connect(server.port(), "topic=load");
            clients.add(ws);
            all.add(ws);
        }
        // each client ends up either subscribed or closed; wait for all 100 to settle
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (all.stream().filter(w -> !w.messages.isEmpty() || w.closeCode.isDone()).count() < all.size()
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        List<WsClient> refused = new ArrayList<>();
        List<WsClient> admitted = new ArrayList<>();
        for (WsClient ws : all) {
            JsonNode first = ws.messages.peek();
            if (first != null && first.path("type").asText().equals("subscribed")) {
                admitted.add(ws);
            } else {
                refused.add(ws);
            }
        }
        assertThat(admitted).hasSize(50);
        assertThat(all.subList(0, 50)).containsExactlyElementsOf(admitted);
        for (WsClient ws : refused) {
            assertThat(ws.awaitClose(Duration.ofSeconds(5))).isEqualTo(CloseCode.TRY_AGAIN_LATER.code());
            OptionalLong hint = CloseCode.parseRetryMs(ws.closeReason());
            assertThat(hint).isPresent();
            assertThat(hint.getAsLong()).isBetween(2_500L, 60_000L);
        }
        assertThat(refused.stream().map(w -> CloseCode.parseRetryMs(w.closeReason()).getAsLong()).distinct().count())
                .as("hints are jittered").isGreaterThan(10);
        Http.publish(server.port(), "load", "{\"still\":\"working\"}");
        for (WsClient ws : admitted) {
            ws.next(); // subscribed
            assertThat(ws.next().path("data").path("still").asText()).isEqualTo("working");
        }
    }

    @Test
    void connectionsPerAddressAreLimited() throws Exception {
        start(c -> c.withLimits(limits(c, 1000, 3, 10_000, Duration.ofSeconds(10), Duration.ofSeconds(30), 100)));
        for (int i = 0; i < 3; i++) {
            WsClient ws = WsClient.connect(server.port(), "topic=t");
            clients.add(ws);
            assertThat(ws.next().path("type").asText()).isEqualTo("subscribed");
        }
        WsClient fourth = WsClient.connect(server.port(), "topic=t");
        clients.add(fourth);
        assertThat(fourth.awaitClose(Duration.ofSeconds(5))).isEqualTo(1013);
        // a slot frees when a connection goes
        ((WsClient) clients.get(0)).close();
        Thread.sleep(300);
        WsClient again = WsClient.connect(server.port(), "topic=t");
        clients.add(again);
        assertThat(again.next().path("type").asText()).isEqualTo("subscribed");
    }

    @Test
    void upgradesOverTheHandshakeRateAreClosedWith1013() throws Exception {
        start(c -> c.withLimits(limits(c, 1000, 1000, 5, Duration.ofSeconds(10), Duration.ofSeconds(30), 100)));
        List<WsClient> burst = new ArrayList<>();
        for (int i = 0; i < 15; i++) {
            WsClient ws = WsClient.connect(server.port(), "topic=t");
            clients.add(ws);
            burst.add(ws);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (burst.stream().filter(w -> !w.messages.isEmpty() || w.closeCode.isDone()).count() < burst.size()
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        int refused = 0;
        for (WsClient ws : burst) {
            if (ws.messages.isEmpty()) {
                assertThat(ws.awaitClose(Duration.ofSeconds(5))).isEqualTo(1013);
                refused++;
            }
        }
        assertThat(refused).isGreaterThanOrEqualTo(5);
    }

    @Test
    void aPeerSilentAfterAPingIsDisconnected() throws Exception {
        start(c -> c.withHeartbeat(new ServerConfig.Heartbeat(Duration.ofMillis(300), Duration.ofMillis(300),
                ServerConfig.Heartbeat.DEFAULT_SSE_INTERVAL)));
        try (RawWebSocket silent = RawWebSocket.open(server.port(), "topic=t", 64 * 1024);
             WsClient answering = WsClient.connect(server.port(), "topic=t")) {
            assertThat(silent.drainUntilClosed(5_000)).as("server closed the silent peer").isNotNegative();
            Thread.sleep(1_000);
            assertThat(answering.socket().isInputClosed()).as("a peer that answers pings stays").isFalse();
            assertThat(server.liveConnections()).isEqualTo(1);
        }
    }

    @Test
    void anHttpConnectionThatNeverCompletesItsRequestIsClosed() throws Exception {
        start(c -> c.withLimits(limits(c, 1000, 1000, 1000, Duration.ofMillis(500), Duration.ofSeconds(30), 100)));
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.getOutputStream().write("GET /v1/live?topic=t HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            s.setSoTimeout(5_000);
            long t0 = System.nanoTime();
            assertThat(s.getInputStream().read()).isEqualTo(-1);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(4));
        }
    }

    @Test
    void aStalledReaderIsClosedWhileOtherSubscribersGetEveryEvent() throws Exception {
        start(c -> c.withLimits(limits(c, 1000, 1000, 1000, Duration.ofSeconds(10), Duration.ofSeconds(1), 100)));
        RawWebSocket stalled = RawWebSocket.open(server.port(), "topic=big", 4096);
        clients.add(stalled);
        List<WsClient> readers = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            WsClient ws = WsClient.connect(server.port(), "topic=big");
            clients.add(ws);
            readers.add(ws);
            ws.next();
        }
        // enough to fill the stalled peer's receive buffer and the server's socket send buffer
        String payload = "{\"pad\":\"" + "x".repeat(16_000) + "\"}";
        int events = 600;
        for (int i = 0; i < events; i++) {
            assertThat(Http.publish(server.port(), "big", payload).status()).isEqualTo(201);
        }
        for (WsClient ws : readers) {
            assertThat(ws.awaitEvents(events, Duration.ofSeconds(30))).hasSize(events);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (server.liveConnections() > readers.size() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(server.liveConnections()).as("the stalled reader was closed").isEqualTo(readers.size());
    }

    @Test
    void aMessageFloodClosesWith1008() throws Exception {
        start(c -> c.withLimits(limits(c, 1000, 1000, 1000, Duration.ofSeconds(10), Duration.ofSeconds(30), 20)));
        try (WsClient ws = WsClient.connect(server.port(), "topic=t")) {
            ws.next();
            for (int i = 0; i < 60; i++) {
                try {
                    ws.socket().sendText("{\"type\":\"unsubscribe\",\"topic\":\"nope\"}", true).join();
                } catch (java.util.concurrent.CompletionException closedByServer) {
                    break; // the server's 1008 (and its FIN) can arrive before the flood is all sent
                }
            }
            assertThat(ws.awaitClose(Duration.ofSeconds(5))).isEqualTo(CloseCode.POLICY_VIOLATION.code());
        }
    }

    @Test
    void upgradesFromOriginsNotAllowedAre403() throws Exception {
        start(c -> c.withSecurity(new ServerConfig.Security(List.of("https://good.example"), List.of())));
        RawHttp.Response bad = RawHttp.exchange(server.port(),
                RawHttp.upgrade("topic=t", "Origin: https://evil.example\r\n"));
        assertThat(bad.status()).isEqualTo(403);
        assertThat(bad.json().path("error").asText()).isEqualTo("origin_not_allowed");
        RawHttp.Response none = RawHttp.exchange(server.port(), RawHttp.upgrade("topic=t", ""));
        assertThat(none.status()).isEqualTo(403);
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.getOutputStream().write(RawHttp.upgrade("topic=t", "Origin: https://good.example\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            byte[] head = new byte[12];
            assertThat(s.getInputStream().readNBytes(head, 0, 12)).isEqualTo(12);
            assertThat(new String(head, StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 101");
        }
    }

    @Test
    void readinessAndPublishesAreRefusedWhileDraining() throws Exception {
        start(c -> c.withDrain(new ServerConfig.Drain(Duration.ofMillis(800), Duration.ofSeconds(5),
                Duration.ofSeconds(25), false)));
        assertThat(Http.get(server.port(), "/readyz").status()).isEqualTo(200);
        // a peer that never answers the close frame keeps the drain waiting for a while
        RawWebSocket mute = RawWebSocket.open(server.port(), "topic=t", 64 * 1024);
        clients.add(mute);
        Thread drain = new Thread(server::drain);
        drain.start();
        Thread.sleep(200);
        assertThat(Http.get(server.port(), "/readyz").status()).isEqualTo(503);
        assertThat(Http.get(server.port(), "/healthz").status()).isEqualTo(200);
        assertThat(Http.publish(server.port(), "t", "{}").status()).as("still served during the grace").isEqualTo(201);
        Thread.sleep(900);
        Http.Response refused = Http.publish(server.port(), "t", "{}");
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.header("retry-after")).isEqualTo("1");
        assertThat(refused.json().path("error").asText()).isEqualTo("not_accepting");
        try {
            RawHttp.Response up = RawHttp.exchange(server.port(), RawHttp.upgrade("topic=t", ""));
            assertThat(up.status()).isEqualTo(503);
        } catch (IOException closedAlready) {
            // the drain may have finished and closed the listener: also a refusal
        }
        drain.join(10_000);
        assertThat(server.state()).isEqualTo(io.pushd.server.lifecycle.ServerState.STOPPED);
    }
}
