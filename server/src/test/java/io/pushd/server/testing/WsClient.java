package io.pushd.server.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.protocol.ProtocolCodec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * An independent test client: the JDK's {@code java.net.http.WebSocket}. Collects every text
 * message as parsed JSON, and the close code and reason the server sent.
 */
public final class WsClient implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    public final BlockingQueue<JsonNode> messages;
    public final CompletableFuture<int[]> closeCode;
    private final Holder holder;
    private final WebSocket ws;

    private WsClient(WebSocket ws, Holder holder) {
        this.ws = ws;
        this.holder = holder;
        this.messages = holder.messages;
        this.closeCode = holder.closeCode;
    }

    /** The reason of the server's close frame, once {@link #awaitClose} returned. */
    public String closeReason() {
        return holder.closeReason;
    }

    /** When the server's close frame arrived ({@link System#nanoTime}), once {@link #awaitClose} returned. */
    public long closedAtNanos() {
        return holder.closedAtNanos;
    }

    /** Connects to {@code ws://127.0.0.1:port/v1/live?query}. */
    public static WsClient connect(int port, String query) {
        return connect(URI.create("ws://127.0.0.1:" + port + "/v1/live?" + query));
    }

    public static WsClient connect(URI uri) {
        return connect(HTTP, uri, java.util.Map.of());
    }

    /** With request headers on the upgrade (Authorization), through {@code client} (e.g. one trusting a test CA). */
    public static WsClient connect(HttpClient client, URI uri, java.util.Map<String, String> headers) {
        Holder holder = new Holder();
        WebSocket.Builder b = client.newWebSocketBuilder();
        headers.forEach(b::header);
        WebSocket ws = b
                .connectTimeout(Duration.ofSeconds(5))
                .buildAsync(uri, holder.listener)
                .orTimeout(10, TimeUnit.SECONDS)
                .join();
        return new WsClient(ws, holder);
    }

    /** Connects and returns the failure (e.g. the HTTP status of a refused upgrade). */
    public static CompletableFuture<WebSocket> tryConnect(URI uri) {
        return HTTP.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5))
                .buildAsync(uri, new WebSocket.Listener() { });
    }

    /** Listener state, filled from the first frame on (before {@code connect} returns). */
    private static final class Holder {
        final BlockingQueue<JsonNode> messages = new LinkedBlockingQueue<>();
        final CompletableFuture<int[]> closeCode = new CompletableFuture<>();
        volatile String closeReason;
        volatile long closedAtNanos;
        final StringBuilder partial = new StringBuilder();
        final WebSocket.Listener listener = new WebSocket.Listener() {
            @Override
            public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
                partial.append(data);
                if (last) {
                    String text = partial.toString();
                    partial.setLength(0);
                    messages.add(parse(text));
                }
                ws.request(1);
                return null;
            }

            @Override
            public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
                closedAtNanos = System.nanoTime();
                closeReason = reason;
                closeCode.complete(new int[] {statusCode});
                return null;
            }

            @Override
            public void onError(WebSocket ws, Throwable error) {
                closeCode.completeExceptionally(error);
            }
        };
    }

    private static JsonNode parse(String text) {
        try {
            return ProtocolCodec.mapper().readTree(text);
        } catch (Exception e) {
            throw new IllegalStateException("server sent invalid JSON: " + text, e);
        }
    }

    public void send(String text) {
        ws.sendText(text, true).join();
    }

    public WebSocket socket() {
        return ws;
    }

    /** The next message, or fails after the timeout. */
    public JsonNode next(Duration timeout) throws InterruptedException {
        JsonNode n = messages.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (n == null) {
            throw new AssertionError("no message within " + timeout + endedBecause());
        }
        return n;
    }

    /** What ended the socket, if something did: the server's close, or a failure (e.g. invalid JSON). */
    private String endedBecause() {
        if (!closeCode.isDone()) {
            return "";
        }
        try {
            return "; closed by the server with " + closeCode.join()[0] + " " + holder.closeReason;
        } catch (java.util.concurrent.CompletionException e) {
            StringBuilder chain = new StringBuilder("; the socket failed:");
            for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
                chain.append(' ').append(t);
            }
            return chain.toString();
        }
    }

    public JsonNode next() throws InterruptedException {
        return next(Duration.ofSeconds(10));
    }

    /** Takes messages until {@code count} of type {@code event} arrived (other types are kept too). */
    public List<JsonNode> awaitEvents(int count, Duration timeout) throws InterruptedException {
        List<JsonNode> all = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        int events = 0;
        while (events < count) {
            long left = deadline - System.nanoTime();
            JsonNode n = left <= 0 ? null : messages.poll(left, TimeUnit.NANOSECONDS);
            if (n == null) {
                throw new AssertionError("only " + events + " of " + count + " events within " + timeout
                        + "; got " + all);
            }
            all.add(n);
            if ("event".equals(n.path("type").asText())) {
                events++;
            }
        }
        return all;
    }

    /** The close code the server sent, waiting up to the timeout. */
    public int awaitClose(Duration timeout) throws Exception {
        return closeCode.get(timeout.toMillis(), TimeUnit.MILLISECONDS)[0];
    }

    @Override
    public void close() {
        try {
            if (!ws.isOutputClosed()) {
                ws.sendClose(1000, "bye").orTimeout(2, TimeUnit.SECONDS).exceptionally(t -> null).join();
            }
        } catch (RuntimeException ignored) {
            // already gone
        }
        ws.abort();
    }
}
