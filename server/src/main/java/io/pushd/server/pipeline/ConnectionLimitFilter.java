package io.pushd.server.pipeline;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ipfilter.AbstractRemoteAddressFilter;
import io.pushd.server.admission.ConnectionLimiter;
import io.pushd.server.metrics.ServerMetrics;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refuses a connection at accept when the {@link ConnectionLimiter} says so: it is closed at once,
 * before anything is read (no answer: under a descriptor flood the cheapest refusal is the best).
 * Counted in {@code push_connections_refused_total{reason}}, logged at most once per
 * {@link #LOG_EVERY_SECONDS}. Shared by every connection; it leaves the pipeline once it decided.
 */
@ChannelHandler.Sharable
final class ConnectionLimitFilter extends AbstractRemoteAddressFilter<InetSocketAddress> {

    private static final Logger log = LoggerFactory.getLogger(ConnectionLimitFilter.class);
    static final long LOG_EVERY_SECONDS = 10;

    private final ConnectionLimiter limiter;
    private final ServerMetrics metrics;
    private final LogThrottle perAddressLog = new LogThrottle(LOG_EVERY_SECONDS, TimeUnit.SECONDS, System.nanoTime());
    private final LogThrottle totalLog = new LogThrottle(LOG_EVERY_SECONDS, TimeUnit.SECONDS, System.nanoTime());

    /**
     * Gives the slot back when the connection closes. One listener for all connections (a lambda
     * capturing the address would be an object per open connection): the channel keeps its remote
     * address after it closes, and {@link #accept} only runs for a channel that has one.
     */
    private final ChannelFutureListener releaseOnClose;

    ConnectionLimitFilter(ConnectionLimiter limiter, ServerMetrics metrics) {
        this.limiter = limiter;
        this.metrics = metrics;
        this.releaseOnClose = f -> limiter.release(((InetSocketAddress) f.channel().remoteAddress()).getAddress());
    }

    @Override
    protected boolean accept(ChannelHandlerContext ctx, InetSocketAddress remote) {
        InetAddress peer = remote.getAddress();
        ConnectionLimiter.Refusal refusal = limiter.tryAcquire(peer);
        if (refusal == null) {
            ctx.channel().closeFuture().addListener(releaseOnClose);
            return true;
        }
        metrics.connectionRefused(refusal);
        long n;
        if (refusal == ConnectionLimiter.Refusal.TOTAL) {
            if ((n = totalLog.record(System.nanoTime())) > 0) {
                // the server is full, not one client misbehaving: operators need to see this
                log.warn("refused {} connection(s) at the cap of {} TCP connections (limits.maxTcpConnections)",
                        n, limiter.maxTotal());
            }
        } else if ((n = perAddressLog.record(System.nanoTime())) > 0) {
            log.debug("refused {} connection(s) over {} per address (limits.maxTcpConnectionsPerAddress), last from {}",
                    n, limiter.maxPerAddress(), peer.getHostAddress());
        }
        return false;
    }
}
