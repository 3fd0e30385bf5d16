package io.pushd.server.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.pushd.protocol.CloseCode;
import io.pushd.server.metrics.ServerMetrics;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The closing handshake (RFC 6455 sections 5.5.1 and 7), both directions, in one place: a
 * connection sends exactly one close frame, behind a guard.
 *
 * <ul>
 *   <li>The server closes ({@link #close}) with its code.</li>
 *   <li>The peer closes ({@link #onPeerClose}): a valid code is echoed, an invalid one answered
 *       with 1002, a reason that is not UTF-8 with 1007.</li>
 * </ul>
 *
 * <p>Either way, once the close frame is out the output is shut, so a FIN follows right behind
 * the frame (the server ends the TCP connection first, section 7.1.1), while input is still read
 * and discarded until the peer's close frame, its FIN or {@link #FORCE_CLOSE_MILLIS}; only then is
 * the socket closed. Closing while the peer is still sending would make the kernel answer with a
 * reset, and a reset can overtake the close frame so the peer never sees it.
 *
 * <p>State is per channel and touched only on its event loop; {@link #close} may be called from
 * any thread.
 */
final class WebSocketClose {

    private static final Logger log = LoggerFactory.getLogger(WebSocketClose.class);
    private static final AttributeKey<State> STATE = AttributeKey.valueOf("push.close");
    /** How long the closing handshake may take before the socket is closed anyway. */
    static final long FORCE_CLOSE_MILLIS = 3_000;

    /** Event loop only. */
    private static final class State {
        ChannelFuture sent;   // the write of our close frame, once there is one
        boolean received;     // the peer's close frame arrived
    }

    private WebSocketClose() {
    }

    /** Starts the closing handshake with this code, unless a close frame was already sent. */
    static void close(Channel ch, CloseCode code, String reason, ServerMetrics metrics) {
        close(ch, null, code, reason, metrics);
    }

    /** As {@link #close(Channel, CloseCode, String, ServerMetrics)}, from the connection's own sink. */
    static void close(Channel ch, WebSocketSink sink, CloseCode code, String reason, ServerMetrics metrics) {
        if (!ch.eventLoop().inEventLoop()) {
            ch.eventLoop().execute(() -> close(ch, sink, code, reason, metrics));
            return;
        }
        State s = state(ch);
        if (s.sent != null) {
            return;
        }
        String r = CloseCode.truncateReason(reason);
        metrics.closeSent(code, CloseCode.parseRetryMs(r).orElse(-1));
        log.debug("[{}] closing with {} {}", ch.id().asShortText(), code.describe(), r);
        send(ch, s, sink, new CloseWebSocketFrame(code.code(), r));
    }

    /**
     * The peer's close frame: the answer to ours, or the peer starting the handshake. Does not
     * release the frame.
     */
    static void onPeerClose(Channel ch, CloseWebSocketFrame frame, ServerMetrics metrics) {
        State s = state(ch);
        if (s.received) {
            return; // a second close: nothing to answer, the socket is closing
        }
        s.received = true;
        if (s.sent != null) {
            if (s.sent.isDone()) {
                ch.close(); // the answer to our close, which went out earlier: the handshake is complete
            } // else the write's listener takes it from there
            return;
        }
        String id = ch.id().asShortText();
        ByteBuf body = frame.content();
        int code = frame.statusCode(); // -1 without a body
        if (body.readableBytes() == 0) {
            log.debug("[{}] peer closed without a code", id);
            send(ch, s, null, new CloseWebSocketFrame(true, 0, Unpooled.EMPTY_BUFFER));
        } else if (code < 0 || !CloseCode.isTransmittable(code)) {
            // Netty's decoder rejects most of these itself, but lets 5000-65535 through
            String why = code < 0 ? "close frame with a 1-byte body" : "invalid close code " + code;
            log.debug("[{}] protocol error in the peer's close: {}", id, why);
            metrics.closeSent(CloseCode.PROTOCOL_ERROR, -1);
            send(ch, s, null, new CloseWebSocketFrame(CloseCode.PROTOCOL_ERROR.code(), why));
        } else if (!ByteBufUtil.isText(body, body.readerIndex() + 2, body.readableBytes() - 2, StandardCharsets.UTF_8)) {
            log.debug("[{}] peer closed with a reason that is not UTF-8", id);
            metrics.closeSent(CloseCode.INVALID_PAYLOAD, -1);
            send(ch, s, null, new CloseWebSocketFrame(CloseCode.INVALID_PAYLOAD.code(), "close reason is not UTF-8"));
        } else {
            log.debug("[{}] peer closed with {}", id, code);
            send(ch, s, null, new CloseWebSocketFrame(code, "")); // echo the code (section 5.5.1)
        }
    }

    /** True once a close frame was sent (or queued) on this channel. Event loop only. */
    static boolean isClosing(Channel ch) {
        // hasAttr first: attr() would add an entry to every open connection on its first question
        State s = ch.hasAttr(STATE) ? ch.attr(STATE).get() : null;
        return s != null && s.sent != null;
    }

    private static State state(Channel ch) {
        State s = ch.attr(STATE).get();
        if (s == null) {
            s = new State();
            ch.attr(STATE).set(s);
        }
        return s;
    }

    private static void send(Channel ch, State s, WebSocketSink sink, CloseWebSocketFrame frame) {
        // live events written straight to the socket do not pass the protocol handler: the sink
        // stops those before the frame goes (found in the pipeline when the close did not come
        // from it: once per connection, at its close)
        WebSocketSink direct = sink;
        if (direct == null) {
            LiveSessionHandler live = ch.pipeline().get(LiveSessionHandler.class);
            direct = live == null ? null : live.sink();
        }
        if (direct != null) {
            direct.closeFrameWritten();
        }
        // through the whole pipeline, so the protocol handler drops anything written after it
        s.sent = ch.writeAndFlush(frame);
        s.sent.addListener(done -> {
            if (!done.isSuccess()) {
                ch.close();
            } else if (ch instanceof DuplexChannel duplex && ch.isActive()) {
                SslHandler ssl = ch.pipeline().get(SslHandler.class);
                if (ssl == null) {
                    duplex.shutdownOutput(); // the peer's FIN (or close frame, or the timeout) closes
                } else {
                    // TLS: close_notify first, then the FIN, else the peer sees a truncated stream
                    ssl.closeOutbound().addListener(sent -> {
                        if (ch.isActive()) {
                            duplex.shutdownOutput();
                        }
                    });
                }
                // from now on input is only discarded: read it to the end even if reading was paused
                ch.config().setAutoRead(true);
            } else if (s.received) {
                ch.close();
            }
        });
        // a peer that never answers (or never reads, so our frame is still queued) is dropped
        ScheduledFuture<?> force = ch.eventLoop().schedule(() -> {
            if (ch.isOpen()) {
                log.debug("[{}] closing handshake not done within {} ms; closing", ch.id().asShortText(),
                        FORCE_CLOSE_MILLIS);
                ch.close();
            }
        }, FORCE_CLOSE_MILLIS, TimeUnit.MILLISECONDS);
        ch.closeFuture().addListener(closed -> force.cancel(false));
    }
}
