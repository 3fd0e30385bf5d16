package io.pushd.server.pipeline;

import io.pushd.server.config.Limits;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.pushd.server.config.ServerConfig;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The time bounds of a connection while it speaks HTTP (removed when it upgrades to WebSocket),
 * so no connection holds a descriptor for long without doing work:
 * <ul>
 *   <li>against slowloris, the first request must arrive complete within
 *       {@code limits.handshakeTimeout} of the connection opening;</li>
 *   <li>a kept-alive connection with no request in flight is closed after
 *       {@code limits.httpIdleTimeout} (the next request must arrive complete within it);</li>
 *   <li>the first request after {@code limits.httpMaxConnectionAge} is answered with
 *       {@code Connection: close}, so a client that keeps a connection busy (one request every few
 *       seconds) still gives it back; requests pipelined behind that one are dropped unanswered;</li>
 *   <li>a connection that stays unwritable (its peer does not read the answers) for
 *       {@code limits.slowConsumerTimeout} is closed.</li>
 * </ul>
 */
final class RequestTimeoutHandler extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(RequestTimeoutHandler.class);

    private final long firstRequestNanos;
    private final long idleNanos;
    private final long maxAgeNanos;
    private final long unwritableNanos;
    private final long openedNanos = System.nanoTime();
    private int inFlight; // requests read, not yet answered
    private boolean closing; // a request was marked Connection: close
    private ScheduledFuture<?> timer;
    private ScheduledFuture<?> unwritableTimer;

    RequestTimeoutHandler(Limits limits) {
        this.firstRequestNanos = limits.handshakeTimeout().toNanos();
        this.idleNanos = limits.httpIdleTimeout().toNanos();
        this.maxAgeNanos = limits.httpMaxConnectionAge().toNanos();
        this.unwritableNanos = limits.slowConsumerTimeout().toNanos();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        arm(ctx, firstRequestNanos, "no complete request");
        ctx.fireChannelActive();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (ctx.channel().isActive()) {
            arm(ctx, firstRequestNanos, "no complete request");
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof FullHttpRequest req) {
            if (closing) {
                ReferenceCountUtil.release(msg); // after the last answer the connection closes
                return;
            }
            disarm();
            inFlight++;
            if (System.nanoTime() - openedNanos >= maxAgeNanos) {
                closing = true;
                HttpUtil.setKeepAlive(req, false); // the answer says Connection: close, then it closes
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof HttpResponse res && res.status().codeClass() != HttpStatusClass.INFORMATIONAL
                && inFlight > 0 && --inFlight == 0) {
            arm(ctx, idleNanos, "idle"); // waiting for the next request on a kept-alive connection
        }
        ctx.write(msg, promise);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            cancel(unwritableTimer);
            unwritableTimer = null;
        } else if (unwritableTimer == null) {
            unwritableTimer = ctx.executor().schedule(() -> {
                unwritableTimer = null;
                if (!ctx.channel().isWritable()) {
                    log.debug("[{}] answers unread for {} ms; closing", ctx.channel().id().asShortText(),
                            TimeUnit.NANOSECONDS.toMillis(unwritableNanos));
                    ctx.close();
                }
            }, unwritableNanos, TimeUnit.NANOSECONDS);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        disarm();
        cancel(unwritableTimer);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        disarm();
        cancel(unwritableTimer);
        ctx.fireChannelInactive();
    }

    private void arm(ChannelHandlerContext ctx, long nanos, String what) {
        disarm();
        timer = ctx.executor().schedule(() -> {
            log.debug("[{}] {} within {} ms; closing", ctx.channel().id().asShortText(), what,
                    TimeUnit.NANOSECONDS.toMillis(nanos));
            ctx.close();
        }, nanos, TimeUnit.NANOSECONDS);
    }

    private void disarm() {
        cancel(timer);
        timer = null;
    }

    private static void cancel(ScheduledFuture<?> f) {
        if (f != null) {
            f.cancel(false);
        }
    }
}
