package io.pushd.server.pipeline;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.TimeUnit;

/**
 * Ends an HTTP connection after its last answer without a reset overtaking that answer. Closing a
 * socket whose receive buffer still holds unread bytes (the rest of an oversized body, pipelined
 * requests) makes the kernel send RST, and the peer may then lose the answer it has not read yet
 * ("received no bytes" instead of a 413). So: half-close (FIN after the answer), drop whatever
 * still arrives, and close when the peer closes or after {@link #LINGER_MILLIS}. Over TLS the
 * close is immediate: {@code close_notify} already orders the end. Event loop only.
 */
final class LingeringClose {

    /** How long a peer may keep sending after our answer before the socket is closed anyway. */
    static final long LINGER_MILLIS = 2_000;
    private static final String NAME = "http-linger";
    private static final ChannelHandler DISCARD = new Discard();

    private LingeringClose() {
    }

    /** Call once the last answer was flushed. */
    static void close(Channel ch) {
        if (!(ch instanceof DuplexChannel duplex) || !ch.isActive() || ch.pipeline().get(SslHandler.class) != null
                || ch.pipeline().get(NAME) != null) {
            ch.close();
            return;
        }
        ch.pipeline().addFirst(NAME, DISCARD); // raw bytes are released before any decoder sees them
        BackpressureHandler backpressure = BackpressureHandler.of(ch);
        if (backpressure != null) {
            ch.pipeline().remove(backpressure); // nothing is answered any more: reading only drains
        }
        ch.config().setAutoRead(true);
        duplex.shutdownOutput().addListener(done -> {
            if (!done.isSuccess()) {
                ch.close();
            }
        });
        ch.eventLoop().schedule(() -> {
            ch.close();
        }, LINGER_MILLIS, TimeUnit.MILLISECONDS);
    }

    @ChannelHandler.Sharable
    private static final class Discard extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            // nothing to pass on
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // a reset while draining: the answer is out or lost either way
        }
    }
}
