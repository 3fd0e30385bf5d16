package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.CodecException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.PrematureChannelClosureException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.compression.DecompressionException;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import io.pushd.protocol.ClientMessage;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.ErrorCodes;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.protocol.ProtocolException;
import io.pushd.protocol.ServerMessage;
import io.pushd.server.admission.AdmissionControl;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.replay.TopicSubscription;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One WebSocket connection after the upgrade: its subscriptions, in-band commands, and the
 * rules for what a client may send. Per connection; all state is touched on its event loop.
 */
final class LiveSessionHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(LiveSessionHandler.class);

    private final ServerContext server;
    private final Map<String, TopicSubscription> subscriptions = new LinkedHashMap<>();
    private boolean upgraded;
    private String admittedIp; // non-null once admission counted this connection
    private ScheduledFuture<?> slowConsumerCheck;

    LiveSessionHandler(ServerContext server) {
        this.server = server;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
            onUpgraded(ctx);
        }
        super.userEventTriggered(ctx, evt);
    }

    private void onUpgraded(ChannelHandlerContext ctx) {
        upgraded = true;
        String id = ctx.channel().id().asShortText();
        List<ClientMessage.Subscribe> initial = ctx.channel().attr(HttpApiHandler.INITIAL_SUBSCRIPTIONS).getAndSet(null);
        String ip = ctx.channel().attr(HttpApiHandler.CLIENT_IP).get();
        if (!server.lifecycle().isAcceptingWork()) {
            // Upgraded just as the drain began: it missed the drain's snapshot, so close it the same way.
            long retryMs = ThreadLocalRandom.current().nextLong(server.config().drain().minWindow().toMillis() + 1);
            WebSocketClose.close(ctx.channel(), CloseCode.SERVICE_RESTART, CloseCode.retryReason(retryMs),
                    server.metrics());
            return;
        }
        // Over a limit the upgrade still completes, so a browser sees the close code and the hint.
        AdmissionControl.Decision decision = server.admission().admit(ip);
        if (!decision.admitted()) {
            server.metrics().handshake(switch (decision.limit()) {
                case CONNECTIONS -> ServerMetrics.Handshake.REFUSED_CONNECTIONS;
                case PER_IP -> ServerMetrics.Handshake.REFUSED_PER_IP;
                case HANDSHAKE_RATE -> ServerMetrics.Handshake.REFUSED_RATE;
                case STARTUP_RAMP -> ServerMetrics.Handshake.REFUSED_STARTUP_RAMP;
            });
            log.debug("[{}] refused ({}), retry in {} ms", id, decision.reason(), decision.retryMs());
            WebSocketClose.close(ctx.channel(), CloseCode.TRY_AGAIN_LATER, CloseCode.retryReason(decision.retryMs()), server.metrics());
            return;
        }
        admittedIp = ip;
        server.metrics().handshake(ServerMetrics.Handshake.ADMITTED);
        server.liveChannels().add(ctx.channel());
        HeartbeatHandler heartbeat = ctx.pipeline().get(HeartbeatHandler.class);
        if (heartbeat != null) {
            heartbeat.start(ctx.pipeline().context(heartbeat));
        }
        log.debug("[{}] upgraded from {}, {} topic(s)", id, ip, initial == null ? 0 : initial.size());
        if (initial != null) {
            for (ClientMessage.Subscribe s : initial) {
                subscribe(ctx, s);
            }
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof WebSocketFrame frame)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            if (admittedIp == null || WebSocketClose.isClosing(ctx.channel())) {
                return; // refused or closing: nothing the client says matters any more
            }
            if (frame instanceof TextWebSocketFrame text) {
                onText(ctx, text.text());
            } else if (frame instanceof BinaryWebSocketFrame) {
                WebSocketClose.close(ctx.channel(), CloseCode.UNSUPPORTED_DATA, "binary frames are not supported", server.metrics());
            }
            // close frames, pings and pongs are handled before the protocol handler and in it
        } finally {
            ReferenceCountUtil.release(frame);
        }
    }

    private void onText(ChannelHandlerContext ctx, String text) {
        ClientMessage message;
        try {
            message = ProtocolCodec.decodeClient(text);
        } catch (ProtocolException e) {
            sendError(ctx, e.code(), e.getMessage());
            return;
        }
        if (message instanceof ClientMessage.Subscribe s) {
            if (subscriptions.containsKey(s.topic())) {
                sendError(ctx, ErrorCodes.BAD_MESSAGE, "already subscribed to '" + s.topic() + "'");
            } else if (subscriptions.size() >= server.config().limits().maxTopicsPerConnection()) {
                sendError(ctx, ErrorCodes.TOO_MANY_TOPICS, "too many topics (expected: at most "
                        + server.config().limits().maxTopicsPerConnection() + ")");
            } else {
                subscribe(ctx, s);
            }
        } else if (message instanceof ClientMessage.Unsubscribe u) {
            TopicSubscription sub = subscriptions.remove(u.topic());
            if (sub == null) {
                sendError(ctx, ErrorCodes.BAD_MESSAGE, "not subscribed to '" + u.topic() + "'");
            } else {
                sub.close();
            }
        }
    }

    private void subscribe(ChannelHandlerContext ctx, ClientMessage.Subscribe s) {
        TopicSubscription sub = new TopicSubscription(s.topic(), ctx.channel(), server.history(), server.hub(),
                server.metrics());
        subscriptions.put(s.topic(), sub);
        sub.start(s.after());
    }

    private void sendError(ChannelHandlerContext ctx, String code, String message) {
        ctx.writeAndFlush(new TextWebSocketFrame(ProtocolCodec.encode(new ServerMessage.Error(code, message))));
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isWritable()) {
            cancelSlowConsumerCheck();
            for (TopicSubscription sub : subscriptions.values()) {
                sub.onWritable();
            }
        } else if (slowConsumerCheck == null && admittedIp != null) {
            // Subscriptions already stopped writing (they catch up from the store later), so memory
            // is bounded; a reader that stays stuck this long is closed so it resumes elsewhere.
            long timeout = server.config().limits().slowConsumerTimeout().toMillis();
            slowConsumerCheck = ctx.executor().schedule(() -> {
                slowConsumerCheck = null;
                if (!ctx.channel().isWritable()) {
                    long retryMs = ThreadLocalRandom.current().nextLong(
                            server.config().drain().minWindow().toMillis() + 1);
                    log.debug("[{}] slow consumer: unwritable for {} ms", ctx.channel().id().asShortText(), timeout);
                    server.metrics().slowConsumerClosed();
                    WebSocketClose.close(ctx.channel(), CloseCode.TRY_AGAIN_LATER, CloseCode.retryReason(retryMs), server.metrics());
                }
            }, timeout, TimeUnit.MILLISECONDS);
        }
        super.channelWritabilityChanged(ctx);
    }

    private void cancelSlowConsumerCheck() {
        if (slowConsumerCheck != null) {
            slowConsumerCheck.cancel(false);
            slowConsumerCheck = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        for (TopicSubscription sub : subscriptions.values()) {
            sub.close();
        }
        subscriptions.clear();
        cancelSlowConsumerCheck();
        if (admittedIp != null) {
            server.admission().release(admittedIp);
            admittedIp = null;
        }
        log.debug("[{}] disconnected", ctx.channel().id().asShortText());
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        String id = ctx.channel().id().asShortText();
        if (!causedByPeer(cause)) {
            log.warn("[{}] unexpected error", id, cause);
            closeOrDrop(ctx, CloseCode.INTERNAL_ERROR, "internal error");
            return;
        }
        log.debug("[{}] {}", id, cause.toString()); // one line: the peer's doing, not ours
        if (cause instanceof IOException || cause instanceof PrematureChannelClosureException) {
            ctx.close(); // reset, or gone in the middle of a message: nobody to send a close frame to
        } else if (cause instanceof CorruptedWebSocketFrameException e) {
            // the frame decoder and UTF-8 validator say which rule the peer broke
            switch (e.closeStatus().code()) {
                case 1007 -> closeOrDrop(ctx, CloseCode.INVALID_PAYLOAD, e.getMessage());
                case 1009 -> closeOrDrop(ctx, CloseCode.MESSAGE_TOO_BIG, "message too big");
                default -> closeOrDrop(ctx, CloseCode.PROTOCOL_ERROR, e.getMessage());
            }
            if (upgraded) {
                WebSocketClose.discardInput(ctx.channel());
            }
        } else if (cause instanceof TooLongFrameException) {
            closeOrDrop(ctx, CloseCode.MESSAGE_TOO_BIG, "message too big"); // fragments added up past the limit
        } else if (cause instanceof DecompressionException) {
            // permessage-deflate: the inflated message passed maxFrameBytes, or the data was corrupt.
            // Netty throws the same type for both; only its message tells them apart.
            boolean tooBig = String.valueOf(cause.getMessage()).contains("maximum size");
            closeOrDrop(ctx, tooBig ? CloseCode.MESSAGE_TOO_BIG : CloseCode.INVALID_PAYLOAD,
                    tooBig ? "message too big" : "invalid compressed data");
        } else {
            closeOrDrop(ctx, CloseCode.PROTOCOL_ERROR, "protocol error");
        }
    }

    /** A close frame on a WebSocket; before the upgrade there is no WebSocket to send it on. */
    private void closeOrDrop(ChannelHandlerContext ctx, CloseCode code, String reason) {
        if (upgraded) {
            WebSocketClose.close(ctx.channel(), code, reason, server.metrics());
        } else {
            ctx.close();
        }
    }

    /**
     * Whether the peer caused this: bad bytes, a reset, a message cut off by a disconnect. A
     * decoder wraps what its own code threw in a {@link DecoderException}; a runtime exception
     * other than a codec error in there is a bug, as is anything thrown outside the codecs.
     */
    static boolean causedByPeer(Throwable cause) {
        if (cause instanceof IOException || cause instanceof PrematureChannelClosureException) {
            return true;
        }
        if (cause instanceof DecoderException) {
            Throwable inner = cause.getCause();
            return inner == null || inner instanceof CodecException || inner instanceof IOException
                    || !(inner instanceof RuntimeException || inner instanceof Error);
        }
        return false;
    }
}
