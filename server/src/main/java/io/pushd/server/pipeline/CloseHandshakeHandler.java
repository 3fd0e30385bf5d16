package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.pushd.server.metrics.ServerMetrics;

/**
 * The inbound half of the closing handshake, before the protocol handler: the peer's close frames
 * go to {@link WebSocketClose}, and once a close frame was sent nothing else the peer sends is
 * processed (no pong answers a ping, no message reaches the session). Per connection.
 */
final class CloseHandshakeHandler extends ChannelInboundHandlerAdapter {

    private final ServerMetrics metrics;

    CloseHandshakeHandler(ServerMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof CloseWebSocketFrame close) {
            try {
                WebSocketClose.onPeerClose(ctx.channel(), close, metrics);
            } finally {
                close.release();
            }
        } else if (msg instanceof WebSocketFrame frame && WebSocketClose.isClosing(ctx.channel())) {
            frame.release();
        } else {
            ctx.fireChannelRead(msg);
        }
    }
}
