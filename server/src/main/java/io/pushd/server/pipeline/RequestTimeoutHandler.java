package io.pushd.server.pipeline;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Against slowloris: while a connection speaks HTTP, each request must arrive complete within
 * {@code limits.handshakeTimeout} of the connection opening or of the previous response. The
 * handler is removed when the connection upgrades to WebSocket.
 */
final class RequestTimeoutHandler extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(RequestTimeoutHandler.class);

    private final long timeoutNanos;
    private ScheduledFuture<?> timer;

    RequestTimeoutHandler(Duration timeout) {
        this.timeoutNanos = timeout.toNanos();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        arm(ctx);
        ctx.fireChannelActive();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (ctx.channel().isActive()) {
            arm(ctx);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof FullHttpRequest) {
            disarm();
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof HttpResponse) {
            arm(ctx); // waiting for the next request on a kept-alive connection
        }
        ctx.write(msg, promise);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        disarm();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        disarm();
        ctx.fireChannelInactive();
    }

    private void arm(ChannelHandlerContext ctx) {
        disarm();
        timer = ctx.executor().schedule(() -> {
            log.debug("[{}] no complete request within {} ms; closing", ctx.channel().id().asShortText(),
                    TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
            ctx.close();
        }, timeoutNanos, TimeUnit.NANOSECONDS);
    }

    private void disarm() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
