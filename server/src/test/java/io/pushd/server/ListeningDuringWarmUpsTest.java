package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.lifecycle.RetryHints;
import io.pushd.server.lifecycle.ServerState;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.ServerProcess;
import io.pushd.server.testing.SseStream;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import io.pushd.server.store.ChronicleEventStore;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import net.openhft.chronicle.core.time.SystemTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A single node binds its port before its store's recovery and accepts before its warm-ups: a
 * client that connects during the recovery waits in the backlog, and what reaches the server
 * during the warm-ups is sent back with a hint to return once they are over, through the same
 * answers as a drain's (1012 for a WebSocket and an SSE stream, 503 for a publish), and nothing
 * is stored. The clients here are the JDK's own HTTP and WebSocket clients and raw sockets.
 */
class ListeningDuringWarmUpsTest {

    /** What the last start's warm-ups took, as the data directory says: the estimate this start's hints use. */
    static final long LAST_WARMUPS_MILLIS = 3_000;
    static final int EXPECTED_CLIENTS = 1_000;
    /** In the store before the start of the backlog's test. */
    static final int RECOVERED_EVENTS = 300_000;

    @TempDir
    Path dataDir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private CompletableFuture<PushServer> starting;

    @AfterEach
    void stop() throws Exception {
        if (starting != null) {
            starting.get(60, TimeUnit.SECONDS).close();
        }
    }

    @Test
    void aClientArrivingDuringTheWarmUpsIsSentBackWithA1012PastTheirEstimatedEndAndNothingIsStored() throws Exception {
        int port = ServerProcess.freePort();
        ServerConfig c = TestServers.config(dataDir);
        ServerConfig config = c.withServer(new ServerConfig.Server("127.0.0.1", port, 2))
                .withStore(c.store().withReplayWarmup(true))
                .withFanout(c.fanout().withWarmup(true));
        Files.writeString(dataDir.resolve("connections"), Integer.toString(EXPECTED_CLIENTS));
        Files.writeString(dataDir.resolve(PushServer.WARMUP_FILE), Long.toString(LAST_WARMUPS_MILLIS));
        long window = RetryHints.of(config).windowMillis(EXPECTED_CLIENTS);

        long t0 = System.nanoTime();
        startInBackground(config);
        // The port is bound before the store's recovery and accepts once it is over, when the
        // warm-ups' plan is made: that plan is made after the answered /readyz was sent, and
        // before it was answered (the first connection's pipeline takes a while to load).
        long[] sent = new long[1];
        HttpResponse<String> readiness = awaitListening(port, sent);
        long planMillis = (sent[0] - t0) / 1_000_000;
        assertThat(readiness.statusCode()).as("/readyz while the warm-ups run").isEqualTo(503);
        assertThat(readiness.body()).contains("starting");

        // a WebSocket: upgraded, then closed with 1012 and the hint (a browser sees both)
        Closed closed = new Closed();
        http.newWebSocketBuilder().buildAsync(URI.create("ws://127.0.0.1:" + port + "/v1/live?topic=t"), closed)
                .get(10, TimeUnit.SECONDS);
        closed.done.get(10, TimeUnit.SECONDS);
        long sincePlan = (System.nanoTime() - t0) / 1_000_000 - planMillis; // at most
        assertThat(closed.code).isEqualTo(1012);
        JsonNode reason = ProtocolCodec.mapper().readTree(closed.reason);
        long hint = reason.path("retryMs").asLong(-1);
        assertThat(hint).as("hint, at most %d ms after the plan", sincePlan)
                .isBetween(Math.max(1_000, LAST_WARMUPS_MILLIS - sincePlan - 100),
                        LAST_WARMUPS_MILLIS + window);

        // an SSE stream: 200, then its close event with 1012 and the same kind of hint
        try (SseStream sse = SseStream.open(port, "topic=t")) {
            assertThat(sse.status).isEqualTo(200);
            long[] close = sse.closeEvent(Duration.ofSeconds(10));
            assertThat(close[0]).isEqualTo(1012);
            assertThat(close[1]).isBetween(1_000L, LAST_WARMUPS_MILLIS + window);
        }

        // a publish: 503 with Retry-After, and nothing stored
        Http.Response publish = Http.publish(port, "t", "{\"n\":1}");
        assertThat(publish.status()).isEqualTo(503);
        assertThat(publish.header("Retry-After")).isNotNull();
        assertThat(publish.json().path("error").asText()).isEqualTo("not_accepting");
        assertThat(starting).as("all of the above happened while the server was starting").isNotDone();

        PushServer server = starting.get(60, TimeUnit.SECONDS);
        long startMillis = (System.nanoTime() - t0) / 1_000_000;
        assertThat(server.state()).isEqualTo(ServerState.READY);
        assertThat(Http.get(port, "/v1/topics/t").json().path("head").isNull()).as("the refused publish").isTrue();
        String scrape = Http.get(port, "/metrics").body();
        assertThat(scrape)
                .contains("push_handshakes_total{outcome=\"refused_starting\",transport=\"websocket\"} 1.0")
                .contains("push_handshakes_total{outcome=\"refused_starting\",transport=\"sse\"} 1.0");
        long recorded = Long.parseLong(Files.readString(dataDir.resolve(PushServer.WARMUP_FILE)).trim());
        assertThat(recorded).as("this start's warm-ups, the next start's estimate")
                .isPositive().isLessThanOrEqualTo(startMillis - planMillis + 50);

        try (WsClient ws = WsClient.connect(port, "topic=t")) {
            assertThat(ws.next().path("type").asText()).as("once ready, served").isEqualTo("subscribed");
        }
    }

    @Test
    void aClientThatConnectsWhileTheStoreRecoversWaitsInTheBacklogAndIsServedInsteadOfRefused() throws Exception {
        // enough events that the recovery's scan takes a good second here (what a crash's returning
        // clients meet first); no warm-ups, so the server is ready as soon as it accepts
        try (ChronicleEventStore store = new ChronicleEventStore(dataDir, Duration.ofDays(1), 10_000_000,
                Duration.ofDays(1), false, SystemTimeProvider.INSTANCE, 0)) {
            byte[] data = "{\"n\":\"0123456789012345678901234567890123456789012345678901234567890123456789\"}"
                    .getBytes(StandardCharsets.UTF_8);
            for (int seq = 1; seq <= RECOVERED_EVENTS; seq++) {
                store.append("t", seq, System.currentTimeMillis(), null, data);
            }
        }
        int port = ServerProcess.freePort();
        ServerConfig c = TestServers.config(dataDir);
        ServerConfig config = c.withServer(new ServerConfig.Server("127.0.0.1", port, 2))
                .withStore(c.store().withRetention(Duration.ofDays(1), 10_000_000));

        long t0 = System.nanoTime();
        startInBackground(config);
        CompletableFuture<Long> returned = starting.thenApply(started -> System.nanoTime());
        long deadline = t0 + TimeUnit.SECONDS.toNanos(30);
        Socket taken = null;
        while (taken == null) { // refused only until the port is bound, early in the start
            Socket attempt = new Socket();
            try {
                attempt.connect(new InetSocketAddress("127.0.0.1", port), 1_000);
                taken = attempt;
            } catch (ConnectException refused) {
                attempt.close();
                assertThat(System.nanoTime()).as("the port bound within 30 s").isLessThan(deadline);
                assertThat(starting).as("the start is still running").isNotDone();
                Thread.sleep(1);
            }
        }
        long connected = System.nanoTime();
        try (Socket socket = taken) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write("GET /v1/topics/t HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            PushServer server = starting.get(60, TimeUnit.SECONDS);
            long startMillis = (returned.get() - t0) / 1_000_000;

            assertThat(answer).as("served once the server accepts").startsWith("HTTP/1.1 200")
                    .contains("\"head\":\"" + server.epoch() + "-" + RECOVERED_EVENTS + "\"");
            // bound before the recovery, the port takes a connection early in the start; bound
            // after it, late (the recovery is most of a start without warm-ups)
            assertThat((connected - t0) / 1_000_000).as("ms into a start of %d ms that the connection was taken,"
                    + " to wait in the backlog through the recovery", startMillis).isLessThan(startMillis / 2);
        }
    }

    private void startInBackground(ServerConfig config) {
        starting = CompletableFuture.supplyAsync(() -> {
            try {
                return PushServer.start(config);
            } catch (InterruptedException e) {
                throw new CompletionException(e);
            }
        });
    }

    /** GET /readyz until the port takes a connection; its first answer, and in {@code sent} when it was sent. */
    private HttpResponse<String> awaitListening(int port, long[] sent) throws Exception {
        HttpRequest readyz = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz"))
                .timeout(Duration.ofSeconds(20)).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                sent[0] = System.nanoTime();
                return http.send(readyz, HttpResponse.BodyHandlers.ofString());
            } catch (ConnectException refused) {
                assertThat(System.nanoTime()).as("the port opened within 30 s").isLessThan(deadline);
                assertThat(starting).as("the start is still running").isNotDone();
                Thread.sleep(10);
            }
        }
    }

    /** The JDK client's view of the close: code and reason. */
    private static final class Closed implements WebSocket.Listener {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        volatile int code;
        volatile String reason;

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int statusCode, String why) {
            code = statusCode;
            reason = why;
            done.complete(null);
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            done.completeExceptionally(error);
        }
    }
}
