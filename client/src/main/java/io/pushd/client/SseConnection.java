package io.pushd.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.ProtocolCodec;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One server-sent events attempt of a {@link PushClient}: {@code GET /v1/sse} with every topic's
 * resume ID in the query (never {@code Last-Event-ID}, which would win over the query), then the
 * streamed {@code text/event-stream} body through {@link SseParser}. The messages carry the
 * WebSocket's JSON frames ({@code message}: event, {@code subscribed}, {@code reset}), so they go
 * to the client as they are; {@code event: close} {@code {"code","retryMs"}} is kept as the close
 * code and a WebSocket-style reason, and {@code retry:} as the hint of a stream that ended without
 * one (a crash), as an {@code EventSource} would use it.
 *
 * <pre>
 * idle (silence detector) → HTTP client codec → this (→ SseParser)
 * </pre>
 */
final class SseConnection extends ClientConnection<HttpObject> implements SseParser.Handler {

    private static final Logger log = LoggerFactory.getLogger(SseConnection.class);
    /** An HTTP error body (e.g. a 400) is small; the rest is cut. */
    private static final int MAX_ERROR_BODY_BYTES = 4 * 1024;

    private SseParser parser;
    private HttpResponseStatus errorStatus;
    private StringBuilder errorBody;
    private ScheduledFuture<?> responseTimeout;
    /** The last valid {@code retry:} of this stream, -1: none. */
    private long retryMs = -1;

    /** Sent as {@code Authorization: Bearer} when not null; never logged. */
    private final String accessToken;

    SseConnection(PushClient client, URI uri, PushClientOptions options, String accessToken) {
        super(client, uri, options, true); // HTTP objects are released after channelRead0
        this.accessToken = accessToken;
    }

    @Override
    void initPipeline(ChannelPipeline p) {
        // First in line, so that every byte read counts, ": ping" comments included.
        p.addLast("silence", new IdleStateHandler(options.silenceTimeout().toMillis(), 0, 0, TimeUnit.MILLISECONDS));
        p.addLast("http", new HttpClientCodec());
        p.addLast("push", this);
    }

    @Override
    void closedByClient() {
        if (closeCode < 0) {
            closeCode = CloseCode.NORMAL.code();
            closeReason = "closed by client";
        }
        channel.close(); // SSE has no close handshake: ending the request is how a client leaves
    }

    @Override
    OptionalLong retryHint() {
        OptionalLong closeHint = super.retryHint();
        if (closeHint.isPresent() || !opened || retryMs < 0 || closeCode == CloseCode.NORMAL.code()
                || closeCode == CloseCode.TOKEN_EXPIRED.code()) {
            return closeHint;
        }
        return OptionalLong.of(retryMs);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        String target = uri.getRawPath() + (uri.getRawQuery() != null ? "?" + uri.getRawQuery() : "");
        FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, target);
        req.headers().set(HttpHeaderNames.HOST, uri.getHost() + ":" + uri.getPort())
                .set(HttpHeaderNames.ACCEPT, "text/event-stream")
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
        if (accessToken != null && !accessToken.isEmpty()) { // an empty answer sends none, as over WebSocket
            req.headers().set(HttpHeaderNames.AUTHORIZATION, "Bearer " + accessToken);
        }
        ctx.writeAndFlush(req);
        long timeout = options.handshakeTimeout().toMillis();
        // Until the stream opens: an error answer whose body does not end is timed out too (it
        // held a client until the 60 s silence bound, then reported a bare close).
        responseTimeout = ctx.executor().schedule(() -> {
            failed(new IOException(errorStatus == null
                    ? "no response to GET " + uri.getRawPath() + " within " + timeout + " ms"
                    : "GET " + uri.getRawPath() + " answered " + errorStatus + ", whose body did not end within "
                            + timeout + " ms"));
            log.debug("[{}] response timed out", id());
            ctx.close();
        }, timeout, TimeUnit.MILLISECONDS);
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancelTimeout();
        super.channelInactive(ctx);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
        if (msg.decoderResult().isFailure()) {
            exceptionCaught(ctx, msg.decoderResult().cause());
            return;
        }
        if (msg instanceof HttpResponse r) {
            onResponse(r);
        }
        if (msg instanceof HttpContent c && ctx.channel().isActive()) {
            onContent(ctx, c);
        }
    }

    private void onResponse(HttpResponse r) {
        String type = r.headers().get(HttpHeaderNames.CONTENT_TYPE, "");
        if (r.status().code() == 200 && type.startsWith("text/event-stream")) {
            cancelTimeout();
            parser = new SseParser(this, options.maxFrameBytes());
            opened = true;
            client.onOpen(this);
        } else {
            errorStatus = r.status();
            errorBody = new StringBuilder();
        }
    }

    private void onContent(ChannelHandlerContext ctx, HttpContent c) {
        ByteBuf bytes = c.content();
        if (parser != null) {
            try {
                parser.feed(bytes);
            } catch (IllegalStateException e) {
                exceptionCaught(ctx, e);
                return;
            }
        } else if (errorBody != null && errorBody.length() < MAX_ERROR_BODY_BYTES) {
            errorBody.append(bytes.toString(StandardCharsets.UTF_8));
        }
        if (c instanceof LastHttpContent) {
            if (parser != null) {
                if (closeCode < 0) {
                    endNote = "the server ended the stream without a close event";
                }
            } else if (errorStatus != null) {
                refused(errorStatus.code(), errorBody.toString());
                failed(new IOException("GET " + uri.getRawPath() + " answered " + errorStatus + ": "
                        + errorBody.toString().strip()));
                log.debug("[{}] refused: {}", id(), failure.getMessage());
            }
            ctx.close(); // one stream per connection: the next attempt is a new one
        }
    }

    @Override
    public void onMessage(String type, String data, String lastEventId) {
        switch (type) {
            case "message", "subscribed", "reset" -> client.onText(this, data);
            case "close" -> onCloseEvent(data);
            default -> log.debug("[{}] ignoring event type '{}'", id(), type);
        }
    }

    /** {@code {"code":1012,"retryMs":N}}: kept as the WebSocket close would carry it; the response ends next. */
    private void onCloseEvent(String data) {
        try {
            JsonNode close = ProtocolCodec.mapper().readTree(data);
            int code = close.path("code").asInt(-1);
            if (closeCode < 0 && code > 0) {
                closeCode = code;
                JsonNode retry = close.get("retryMs");
                // a hint is 1012's and 1013's (4001's retryMs of 0 is for a plain EventSource)
                closeReason = CloseCode.carriesRetryHint(code) && retry != null && retry.canConvertToLong() && retry.asLong() >= 0
                        ? CloseCode.retryReason(retry.asLong()) : "";
            }
            log.debug("[{}] server closed the stream with {} {}", id(), closeCode, closeReason);
        } catch (IOException | RuntimeException e) {
            log.warn("[{}] ignoring a close event that is not JSON: {}", id(), e.getMessage());
        }
        channel.close(); // nothing follows a close event; do not wait for the terminal chunk
    }

    @Override
    public void onRetry(long millis) {
        retryMs = millis;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.READER_IDLE) {
            // The server sends ": ping" well within this; silence means it or the path is gone.
            endNote = "nothing read for " + options.silenceTimeout().toMillis() + " ms";
            if (!opened) {
                failed(new IOException(endNote)); // the listener hears why, not a bare close
            }
            log.info("[{}] {}, reconnecting", id(), endNote);
            ctx.close();
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        failed(cause);
        if (cause instanceof IOException) {
            log.debug("[{}] connection error: {}", id(), cause.toString()); // resets are ordinary
        } else {
            log.warn("[{}] unexpected error", id(), cause);
        }
        ctx.close();
    }

    private void cancelTimeout() {
        if (responseTimeout != null) {
            responseTimeout.cancel(false);
            responseTimeout = null;
        }
    }
}
