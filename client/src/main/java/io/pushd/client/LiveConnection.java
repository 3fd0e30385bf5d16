package io.pushd.client;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshakeException;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.pushd.protocol.CloseCode;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One WebSocket connection attempt of a {@link PushClient}: builds the pipeline, turns Netty events
 * into calls on the client, and remembers how the connection ended. One instance per channel.
 *
 * <pre>
 * idle (silence detector) → HTTP codec → HTTP aggregator → refusal reader (until the handshake's answer)
 *     → WebSocket protocol (handshake, pong) → frame aggregator → this
 * </pre>
 */
final class LiveConnection extends ClientConnection<WebSocketFrame> {

    private static final Logger log = LoggerFactory.getLogger(LiveConnection.class);
    /** An HTTP error body (e.g. 503 while draining) is small; larger is not our server. */
    private static final int MAX_HTTP_RESPONSE_BYTES = 64 * 1024;
    /** How long our close frame may take to go out before the socket is closed anyway. */
    private static final long FORCE_CLOSE_MILLIS = 2_000;

    private final String accessToken;

    LiveConnection(PushClient client, URI uri, PushClientOptions options, String accessToken) {
        super(client, uri, options, true); // frames are released after channelRead0
        this.accessToken = accessToken;
    }

    /** A text frame on the open WebSocket (an in-band command); false when it is not open. */
    @Override
    boolean sendText(String text) {
        if (!opened || channel == null || !channel.isActive() || closeCode >= 0) {
            return false;
        }
        channel.writeAndFlush(new TextWebSocketFrame(text));
        return true;
    }

    @Override
    void initPipeline(ChannelPipeline p) {
        WebSocketClientProtocolConfig ws = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri(uri)
                .handleCloseFrames(false) // we read the code and the retry hint first
                .sendCloseFrame(WebSocketCloseStatus.NORMAL_CLOSURE) // when we close first
                .forceCloseTimeoutMillis(FORCE_CLOSE_MILLIS)
                .handshakeTimeoutMillis(options.handshakeTimeout().toMillis())
                .maxFramePayloadLength(options.maxFrameBytes())
                .allowExtensions(false)
                .customHeaders(accessToken == null || accessToken.isEmpty() ? null
                        : new DefaultHttpHeaders().set(HttpHeaderNames.AUTHORIZATION, "Bearer " + accessToken))
                .build();
        // First in line, so that every byte read counts, pings included (they stop at the protocol handler).
        p.addLast("silence", new IdleStateHandler(options.silenceTimeout().toMillis(), 0, 0, TimeUnit.MILLISECONDS));
        p.addLast("http", new HttpClientCodec());
        p.addLast("http-aggregator", new HttpObjectAggregator(MAX_HTTP_RESPONSE_BYTES));
        p.addLast("refusal", new RefusalReader());
        p.addLast("ws", new WebSocketClientProtocolHandler(ws));
        p.addLast("ws-aggregator", new WebSocketFrameAggregator(options.maxFrameBytes()));
        p.addLast("push", this);
    }

    /**
     * Reads the status and JSON {@code error} of an answer other than 101 (the protocol handler
     * keeps only status and headers in its exception), then steps out of the pipeline.
     */
    private final class RefusalReader extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            if (msg instanceof FullHttpResponse r) {
                if (r.status().code() != 101) {
                    refused(r.status().code(), r.content().toString(StandardCharsets.UTF_8));
                }
                ctx.pipeline().remove(this);
            }
            ctx.fireChannelRead(msg);
        }
    }

    /** {@link PushClient#close()}: a normal close frame, then the socket. */
    @Override
    void closedByClient() {
        if (closeCode < 0) {
            closeCode = CloseCode.NORMAL.code();
            closeReason = "closed by client";
        }
        channel.close(); // the protocol handler sends 1000 first when the WebSocket is open
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
            opened = true;
            client.onOpen(this);
        } else if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_TIMEOUT) {
            failed(new WebSocketClientHandshakeException("handshake timed out after "
                    + options.handshakeTimeout().toMillis() + " ms"));
            log.debug("[{}] handshake timed out", id());
        } else if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.READER_IDLE) {
            // The server pings well within this; silence means it or the path is gone.
            endNote = "no frame for " + options.silenceTimeout().toMillis() + " ms";
            log.info("[{}] {}, reconnecting", id(), endNote);
            ctx.close();
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
        if (frame instanceof TextWebSocketFrame text) {
            client.onText(this, text.text());
        } else if (frame instanceof CloseWebSocketFrame close) {
            onCloseFrame(ctx, close);
        }
        // binary frames are not part of protocol v1; pings and pongs stop at the protocol handler
    }

    private void onCloseFrame(ChannelHandlerContext ctx, CloseWebSocketFrame close) {
        int code = close.statusCode();
        String reason = close.reasonText();
        if (closeCode < 0) {
            closeCode = code < 0 ? 1005 : code; // 1005: no status received
            closeReason = reason;
        }
        log.debug("[{}] server closed with {} {}", id(), closeCode, reason);
        // Echo the code (RFC 6455 5.5.1), then let go of the socket.
        CloseWebSocketFrame reply = code < 0 ? new CloseWebSocketFrame() : new CloseWebSocketFrame(code, "");
        ctx.writeAndFlush(reply).addListener(f -> ctx.close());
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        failed(cause);
        if (cause instanceof IOException) {
            log.debug("[{}] connection error: {}", id(), cause.toString()); // resets are ordinary
        } else if (cause instanceof WebSocketClientHandshakeException) {
            log.debug("[{}] handshake refused: {}", id(), cause.getMessage());
        } else {
            log.warn("[{}] unexpected error", id(), cause);
        }
        ctx.close();
    }
}
