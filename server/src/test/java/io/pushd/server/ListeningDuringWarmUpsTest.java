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
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A single node opens its port before its warm-ups: what reaches it meanwhile is sent back with
 * a hint to return once they are over, through the same answers as a drain's (1012 for a
 * WebSocket and an SSE stream, 503 for a publish), and nothing is stored. The clients here are
 * the JDK's own HTTP and WebSocket clients and a raw-socket SSE reader.
 */
class ListeningDuringWarmUpsTest {

    /** What the last start's warm-ups took, as the data directory says: the estimate this start's hints use. */
    static final long LAST_WARMUPS_MILLIS = 3_000;
    static final int EXPECTED_CLIENTS = 1_000;

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
        starting = CompletableFuture.supplyAsync(() -> {
            try {
                return PushServer.start(config);
            } catch (InterruptedException e) {
                throw new CompletionException(e);
            }
        });
        HttpResponse<String> readiness = awaitListening(port);
        long listeningMillis = (System.nanoTime() - t0) / 1_000_000;
        assertThat(readiness.statusCode()).as("/readyz while the warm-ups run").isEqualTo(503);
        assertThat(readiness.body()).contains("starting");

        // a WebSocket: upgraded, then closed with 1012 and the hint (a browser sees both)
        Closed closed = new Closed();
        http.newWebSocketBuilder().buildAsync(URI.create("ws://127.0.0.1:" + port + "/v1/live?topic=t"), closed)
                .get(10, TimeUnit.SECONDS);
        closed.done.get(10, TimeUnit.SECONDS);
        long sinceListening = (System.nanoTime() - t0) / 1_000_000 - listeningMillis;
        assertThat(closed.code).isEqualTo(1012);
        JsonNode reason = ProtocolCodec.mapper().readTree(closed.reason);
        long hint = reason.path("retryMs").asLong(-1);
        assertThat(hint).as("hint, %d ms after the port opened", sinceListening)
                .isBetween(Math.max(1_000, LAST_WARMUPS_MILLIS - sinceListening - 100),
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
                .isPositive().isLessThanOrEqualTo(startMillis - listeningMillis + 1_000);

        try (WsClient ws = WsClient.connect(port, "topic=t")) {
            assertThat(ws.next().path("type").asText()).as("once ready, served").isEqualTo("subscribed");
        }
    }

    /** GET /readyz until the port accepts a connection; its first answer. */
    private HttpResponse<String> awaitListening(int port) throws Exception {
        HttpRequest readyz = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz"))
                .timeout(Duration.ofSeconds(5)).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
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
