package io.pushd.server.pipeline;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.util.AttributeKey;
import io.pushd.protocol.CloseCode;
import io.pushd.server.metrics.ServerMetrics;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends a connection's close frame once, behind a guard. The WebSocket protocol handler closes
 * the socket when the client's close frame comes back; if it does not within
 * {@link #FORCE_CLOSE_MILLIS}, the socket is closed anyway.
 */
public final class WebSocketClose {

    private static final Logger log = LoggerFactory.getLogger(WebSocketClose.class);
    private static final AttributeKey<AtomicBoolean> CLOSING = AttributeKey.valueOf("push.closing");
    /** How long the closing handshake may take before the socket is closed anyway. */
    public static final long FORCE_CLOSE_MILLIS = 3_000;

    private WebSocketClose() {
    }

    /** Returns false when a close frame was already sent on this channel. */
    public static boolean close(Channel ch, CloseCode code, String reason, ServerMetrics metrics) {
        AtomicBoolean guard = ch.attr(CLOSING).setIfAbsent(new AtomicBoolean());
        if (guard == null) {
            guard = ch.attr(CLOSING).get();
        }
        if (!guard.compareAndSet(false, true)) {
            return false;
        }
        String r = CloseCode.truncateReason(reason);
        metrics.closeSent(code, CloseCode.parseRetryMs(r).orElse(-1));
        log.debug("[{}] closing with {} {}", ch.id().asShortText(), code.describe(), r);
        ChannelFuture f = ch.writeAndFlush(new CloseWebSocketFrame(code.code(), r));
        f.addListener(done -> {
            if (!done.isSuccess()) {
                ch.close();
            }
        });
        // A peer that never answers (or never reads, so our frame is still queued) is dropped.
        ch.eventLoop().schedule(() -> {
            if (ch.isActive()) {
                log.debug("[{}] no close reply within {} ms; closing", ch.id().asShortText(), FORCE_CLOSE_MILLIS);
                ch.close();
            }
        }, FORCE_CLOSE_MILLIS, TimeUnit.MILLISECONDS);
        return true;
    }

    /** True once a close frame was sent. */
    public static boolean isClosing(Channel ch) {
        AtomicBoolean guard = ch.attr(CLOSING).get();
        return guard != null && guard.get();
    }
}
