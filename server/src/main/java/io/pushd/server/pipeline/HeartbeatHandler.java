package io.pushd.server.pipeline;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pings every {@code heartbeat.interval} once the connection is a WebSocket; when no frame of
 * any kind arrives within {@code heartbeat.timeout} after a ping, the peer is gone and the
 * connection is closed to free it. Sits before the protocol handler so it sees pongs. While
 * reading is paused (the peer does not read what we send, see {@link BackpressureHandler}) its
 * pongs cannot be seen, so that silence does not count: the slow-consumer guard of
 * {@link io.pushd.server.session.Session} decides about such a peer.
 *
 * <p>Not Netty's {@code IdleStateHandler}: that measures silence from the last read rather than
 * from a ping sent at a fixed rate (it would ping only when nothing was written, and close at
 * different times), and it cannot tell "reading was paused at some moment since the ping".
 */
final class HeartbeatHandler extends ChannelDuplexHandler implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(HeartbeatHandler.class);

    private final long intervalNanos;
    private final long timeoutNanos;
    private long lastReadNanos = System.nanoTime();
    private ScheduledFuture<?> pinger;
    /** This handler's context once started: the handler is its own ping task (no lambda per connection). */
    private ChannelHandlerContext ctx;

    HeartbeatHandler(Duration interval, Duration timeout) {
        this.intervalNanos = interval.toNanos();
        this.timeoutNanos = timeout.toNanos();
    }

    /** Called on the event loop once the upgrade completed. */
    void start(ChannelHandlerContext ctx) {
        if (pinger == null) {
            this.ctx = ctx;
            lastReadNanos = System.nanoTime();
            pinger = ctx.executor().scheduleAtFixedRate(this, intervalNanos, intervalNanos, TimeUnit.NANOSECONDS);
        }
    }

    /** The ping task. */
    @Override
    public void run() {
        ping(ctx);
    }

    private void ping(ChannelHandlerContext ctx) {
        if (!ctx.channel().isActive() || WebSocketClose.isClosing(ctx.channel())) {
            return; // nothing goes out after a close frame
        }
        long sentAt = System.nanoTime();
        ctx.writeAndFlush(new PingWebSocketFrame());
        ctx.executor().schedule(() -> {
            BackpressureHandler backpressure = BackpressureHandler.of(ctx.channel());
            boolean couldRead = backpressure == null || !backpressure.pausedSince(sentAt);
            if (lastReadNanos - sentAt < 0 && couldRead && ctx.channel().isActive()) {
                log.debug("[{}] no frame within {} ms of a ping; closing", ctx.channel().id().asShortText(),
                        TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
                ctx.close();
            }
        }, timeoutNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof WebSocketFrame) {
            lastReadNanos = System.nanoTime();
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (pinger != null) {
            pinger.cancel(false);
        }
        ctx.fireChannelInactive();
    }
}
