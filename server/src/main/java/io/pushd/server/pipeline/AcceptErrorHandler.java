package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.pushd.server.metrics.ServerMetrics;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last handler of the listening channel: an accept that failed ("Too many open files") is
 * counted in {@code push_connections_refused_total{reason="accept_failed"}} and logged at most
 * once per {@link #LOG_EVERY_SECONDS} with the count, instead of a stack trace per failure from
 * the pipeline's tail. Netty's acceptor before it already pauses accepting for a second.
 */
@ChannelHandler.Sharable
public final class AcceptErrorHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(AcceptErrorHandler.class);
    static final long LOG_EVERY_SECONDS = 10;

    private final ServerMetrics metrics;
    private final LogThrottle throttle;

    public AcceptErrorHandler(ServerMetrics metrics) {
        this(metrics, System.nanoTime());
    }

    AcceptErrorHandler(ServerMetrics metrics, long startNanos) {
        this.metrics = metrics;
        this.throttle = new LogThrottle(LOG_EVERY_SECONDS, TimeUnit.SECONDS, startNanos);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        failed(cause, System.nanoTime());
    }

    void failed(Throwable cause, long nowNanos) {
        metrics.acceptFailed();
        long n = throttle.record(nowNanos);
        if (n > 0) {
            log.warn("{} accept(s) failed since the last report (at most one every {} s): {}", n, LOG_EVERY_SECONDS,
                    cause.toString());
        }
    }
}
