package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.pushd.protocol.CloseCode;
import io.pushd.server.admission.TokenBucket;
import io.pushd.server.metrics.ServerMetrics;

/**
 * Counts every frame a client sends against {@code limits.maxInboundMessagesPerSecond}: pings
 * and pongs too, which the protocol handler answers or drops before the session sees them, and
 * each fragment of a message. Over the limit the connection is closed with 1008. Sits after
 * {@link CloseHandshakeHandler}, so nothing is counted once the connection is closing (a close
 * frame ends the connection, so it needs no limit). Per connection.
 */
final class InboundRateHandler extends ChannelInboundHandlerAdapter {

    private final int perSecond;
    private final TokenBucket bucket;
    private final ServerMetrics metrics;

    InboundRateHandler(int perSecond, ServerMetrics metrics) {
        this.perSecond = perSecond;
        this.bucket = new TokenBucket(perSecond, System.nanoTime());
        this.metrics = metrics;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof WebSocketFrame frame && !bucket.tryAcquire(System.nanoTime())) {
            frame.release();
            WebSocketClose.close(ctx.channel(), CloseCode.POLICY_VIOLATION,
                    "more than " + perSecond + " frames per second", metrics);
            return;
        }
        ctx.fireChannelRead(msg);
    }
}
