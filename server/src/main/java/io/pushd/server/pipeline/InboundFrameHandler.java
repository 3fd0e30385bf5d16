package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.pushd.protocol.CloseCode;
import io.pushd.server.admission.TokenBucket;
import io.pushd.server.metrics.ServerMetrics;

/**
 * Every frame from the peer, before the protocol handler, in this order:
 * <ol>
 *   <li>the inbound half of the closing handshake: the peer's close frames go to
 *       {@link WebSocketClose}, and once a close frame was sent nothing else the peer sends is
 *       processed (no pong answers a ping, no message reaches the session);</li>
 *   <li>the inbound limit: every other frame counts against {@code limits.maxInboundMessagesPerSecond},
 *       pings and pongs too (which the protocol handler answers or drops before the session sees
 *       them) and each fragment of a message; over the limit the connection is closed with 1008.
 *       Nothing is counted once the connection is closing, and a close frame needs no limit (it
 *       ends the connection).</li>
 * </ol>
 * One handler rather than two: each handler of a WebSocket pipeline is a context and an object kept
 * for the connection's whole life, and idle connections are most of them. Per connection.
 */
final class InboundFrameHandler extends ChannelInboundHandlerAdapter {

    private final int perSecond;
    private final int maxFrameBytes;
    private final TokenBucket bucket;
    private final ServerMetrics metrics;

    InboundFrameHandler(int perSecond, ServerMetrics metrics) {
        this(perSecond, Integer.MAX_VALUE, metrics);
    }

    /**
     * @param maxFrameBytes what a data frame may hold once inflated (permessage-deflate): the
     *                      decoder bounds frames as they come, the inflater only roughly
     */
    InboundFrameHandler(int perSecond, int maxFrameBytes, ServerMetrics metrics) {
        this.maxFrameBytes = maxFrameBytes;
        this.perSecond = perSecond;
        this.bucket = new TokenBucket(perSecond, System.nanoTime());
        this.metrics = metrics;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof WebSocketFrame frame && frame.rsv() != 0 && !WebSocketClose.isClosing(ctx.channel())) {
            // With permessage-deflate allowed, Netty's frame decoder checks no reserved bit, and its
            // inflater clears RSV1 only where the extension puts it (a message's first data frame):
            // any bit left here (RSV2, RSV3, RSV1 on a control or continuation frame, RSV1 from a
            // peer that did not negotiate the extension) breaks RFC 6455 5.2 and RFC 7692 6.
            frame.release();
            WebSocketClose.close(ctx.channel(), CloseCode.PROTOCOL_ERROR, "reserved bits set", metrics);
        } else if (msg instanceof WebSocketFrame frame && !(frame instanceof CloseWebSocketFrame)
                && frame.content().readableBytes() > maxFrameBytes && !WebSocketClose.isClosing(ctx.channel())) {
            frame.release();
            WebSocketClose.close(ctx.channel(), CloseCode.MESSAGE_TOO_BIG, "message too big", metrics);
        } else if (msg instanceof CloseWebSocketFrame close) {
            try {
                WebSocketClose.onPeerClose(ctx.channel(), close, metrics);
            } finally {
                close.release();
            }
        } else if (msg instanceof WebSocketFrame frame && WebSocketClose.isClosing(ctx.channel())) {
            frame.release();
        } else if (msg instanceof WebSocketFrame frame && !bucket.tryAcquire(System.nanoTime())) {
            frame.release();
            WebSocketClose.close(ctx.channel(), CloseCode.POLICY_VIOLATION,
                    "more than " + perSecond + " frames per second", metrics);
        } else {
            ctx.fireChannelRead(msg);
        }
    }
}
