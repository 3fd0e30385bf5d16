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
import io.pushd.server.auth.Grant;
import io.pushd.server.session.Session;
import java.io.IOException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The WebSocket adapter of a {@link Session}: frames in go to the session, the session writes
 * through a {@link WebSocketSink}; the one WebSocket rule of its own is which close code an error
 * gets. Per connection, added when the connection upgrades; all state is touched on its event
 * loop.
 */
final class LiveSessionHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(LiveSessionHandler.class);

    private final ServerContext server;
    private WebSocketSink sink;
    private Session session;
    private boolean upgraded;
    /*
     * What the gate decided, held by this handler until the handshake completes and dropped then:
     * channel attributes would keep an entry each (and copy the attribute array per key) for the
     * connection's whole life.
     */
    private String clientIp;
    private Grant grant;
    private List<ClientMessage.Subscribe> initial;

    /**
     * @param clientIp the address the connection counts against for admission (see ClientAddress)
     * @param grant    what the upgrade's access check allowed; null in auth.mode none
     * @param initial  the subscriptions of the upgrade's query
     */
    LiveSessionHandler(ServerContext server, String clientIp, Grant grant, List<ClientMessage.Subscribe> initial) {
        this.server = server;
        this.clientIp = clientIp;
        this.grant = grant;
        this.initial = initial;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        sink = new WebSocketSink(ctx.channel(), server.metrics());
        session = new Session(sink, server.sessions());
        // Also when a handler before this one throws from its channelInactive (Netty's deflate
        // decoder rethrows its failure there) and the event never comes: the session gives its
        // admission slot back and stops its timers whatever (onDisconnected runs once).
        Session s = session;
        ctx.channel().closeFuture().addListener(f -> s.onDisconnected());
    }

    /** The connection's sink, for {@link WebSocketClose} to stop its direct writes before our close frame. */
    WebSocketSink sink() {
        return sink;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
            upgraded = true;
            List<ClientMessage.Subscribe> subscriptions = initial;
            Grant granted = grant;
            initial = null;
            grant = null;
            String ip = clientIp;
            clientIp = null;
            if (session.open(ip, granted, subscriptions)) {
                HeartbeatHandler heartbeat = ctx.pipeline().get(HeartbeatHandler.class);
                if (heartbeat != null) {
                    heartbeat.start(ctx.pipeline().context(heartbeat));
                }
            }
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof WebSocketFrame frame)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            if (!session.isListening()) {
                return; // refused or closing: nothing the client says matters any more
            }
            if (frame instanceof TextWebSocketFrame text) {
                session.onMessage(text.text());
            } else if (frame instanceof BinaryWebSocketFrame) {
                session.close(CloseCode.UNSUPPORTED_DATA, "binary frames are not supported");
            }
            // close frames, pings and pongs are handled before the protocol handler and in it
        } finally {
            ReferenceCountUtil.release(frame);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        session.onWritabilityChanged();
        super.channelWritabilityChanged(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        session.onDisconnected();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        String id = ctx.channel().id().asShortText();
        if (cause instanceof io.netty.channel.ChannelPipelineException && cause.getCause() instanceof DecompressionException) {
            // the failed inflater, removed below, throws its failure once more on its way out: the
            // close for it is already under way
            log.debug("[{}] {}", id, cause.getCause().toString());
            return;
        }
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
                PushServerInitializer.discardWebSocketInput(ctx.pipeline());
            }
        } else if (cause instanceof TooLongFrameException) {
            closeOrDrop(ctx, CloseCode.MESSAGE_TOO_BIG, "message too big"); // fragments added up past the limit
        } else if (cause instanceof DecompressionException) {
            // permessage-deflate: the inflated message passed maxFrameBytes, or the data was corrupt.
            // Netty throws the same type for both, with no subtype or close status (unlike
            // CorruptedWebSocketFrameException): only its message tells them apart.
            boolean tooBig = String.valueOf(cause.getMessage()).contains("maximum size");
            closeOrDrop(ctx, tooBig ? CloseCode.MESSAGE_TOO_BIG : CloseCode.INVALID_PAYLOAD,
                    tooBig ? "message too big" : "invalid compressed data");
            if (upgraded) {
                // the failed inflater would throw again at every read and at channelInactive
                PushServerInitializer.discardWebSocketInput(ctx.pipeline());
            }
        } else {
            closeOrDrop(ctx, CloseCode.PROTOCOL_ERROR, "protocol error");
        }
    }

    /** A close frame on a WebSocket; before the upgrade there is no WebSocket to send it on. */
    private void closeOrDrop(ChannelHandlerContext ctx, CloseCode code, String reason) {
        if (upgraded) {
            session.close(code, reason);
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
