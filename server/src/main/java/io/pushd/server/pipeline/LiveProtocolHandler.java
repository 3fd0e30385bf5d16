package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.websocketx.WebSocketHandshakeException;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;

/**
 * Netty's server protocol handler (handshake, pings, frame rules), except that an error after the
 * upgrade does not close the socket at once: Netty's handler closes on every exception passing
 * it, which cuts off a peer still sending with a reset that can overtake the close frame.
 * Instead the error goes on to {@link LiveSessionHandler}, which picks the close code, and
 * {@link WebSocketClose} runs the closing handshake.
 */
final class LiveProtocolHandler extends WebSocketServerProtocolHandler {

    LiveProtocolHandler(WebSocketServerProtocolConfig config) {
        super(config);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        if (cause instanceof WebSocketHandshakeException) {
            super.exceptionCaught(ctx, cause); // a failed upgrade: 400, then close
        } else {
            ctx.fireExceptionCaught(cause);
        }
    }
}
