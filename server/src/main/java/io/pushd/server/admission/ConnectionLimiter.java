package io.pushd.server.admission;

import io.pushd.server.config.Limits;
import io.pushd.server.config.ServerConfig;
import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Caps TCP connections of every kind (HTTP and WebSocket) at accept, in all and per peer address,
 * so one address cannot take the descriptors everybody else needs. Counted by the TCP peer:
 * {@code X-Forwarded-For} is not known before a request arrives. Peers in
 * {@code security.trustedProxies} carry many clients each, so only the total caps them (their
 * clients still count one by one against {@code limits.maxConnectionsPerIp} on upgrade).
 * Thread-safe: every event loop accepts through the same instance.
 */
public final class ConnectionLimiter {

    /** Descriptors kept for the store's files, the event loops and a few accepts beyond the cap. */
    static final int MIN_RESERVE = 256;

    /** Why a connection was refused at accept. */
    public enum Refusal { TOTAL, PER_ADDRESS }

    private final int maxTotal;
    private final int maxPerAddress;
    private final ClientAddress proxies;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, AtomicInteger> perAddress = new ConcurrentHashMap<>();

    ConnectionLimiter(int maxTotal, int maxPerAddress, ClientAddress proxies) {
        this.maxTotal = maxTotal;
        this.maxPerAddress = maxPerAddress;
        this.proxies = proxies;
    }

    /**
     * The caps of {@code limits}; where they are 0, derived from {@code openFileLimit} (the
     * process's RLIMIT_NOFILE, or -1 when unknown): all of it but a reserve of 5 % (at least 256)
     * in all, and 90 % of that per address.
     */
    public static ConnectionLimiter of(Limits limits, long openFileLimit, ClientAddress proxies) {
        long byDescriptors = openFileLimit <= 0 ? Integer.MAX_VALUE
                : Math.max(1, openFileLimit - Math.max(MIN_RESERVE, openFileLimit / 20));
        int maxTotal = (int) Math.min(Integer.MAX_VALUE, limits.maxTcpConnections() == 0 ? byDescriptors
                : Math.min(limits.maxTcpConnections(), byDescriptors));
        int maxPerAddress = limits.maxTcpConnectionsPerAddress() == 0 ? Math.max(1, (int) (maxTotal * 0.9))
                : Math.min(limits.maxTcpConnectionsPerAddress(), maxTotal);
        return new ConnectionLimiter(maxTotal, maxPerAddress, proxies);
    }

    /** Null when admitted (then call {@link #release} once it closes), else why not. */
    public Refusal tryAcquire(InetAddress peer) {
        if (total.incrementAndGet() > maxTotal) {
            total.decrementAndGet();
            return Refusal.TOTAL;
        }
        if (proxies.isTrustedProxy(peer)) {
            return null;
        }
        boolean[] over = {false};
        perAddress.compute(peer, (k, v) -> {
            AtomicInteger c = v == null ? new AtomicInteger() : v;
            if (c.get() >= maxPerAddress) {
                over[0] = true;
            } else {
                c.incrementAndGet();
            }
            return c.get() == 0 ? null : c;
        });
        if (over[0]) {
            total.decrementAndGet();
            return Refusal.PER_ADDRESS;
        }
        return null;
    }

    public void release(InetAddress peer) {
        // The address's slot first, the total last (the reverse of tryAcquire): once the total
        // (the push.tcp.connections gauge) counts a connection gone, its address's slot is free too.
        if (!proxies.isTrustedProxy(peer)) {
            perAddress.computeIfPresent(peer, (k, v) -> v.decrementAndGet() <= 0 ? null : v);
        }
        total.decrementAndGet();
    }

    public int connections() {
        return total.get();
    }

    public int maxTotal() {
        return maxTotal;
    }

    public int maxPerAddress() {
        return maxPerAddress;
    }
}
