package io.pushd.server.admission;

import io.pushd.server.config.Limits;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.lifecycle.RetryHints;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether an upgraded connection may stay: total connections, connections per client
 * address, and an upgrade rate (token bucket). A refusal carries a jittered retry hint from
 * {@link RetryHints} that grows with the overload, so refused clients come back spread out and
 * later the worse it is.
 */
public final class AdmissionControl {

    private static final Logger log = LoggerFactory.getLogger(AdmissionControl.class);

    /** Which limit refused a connection. */
    public enum Limit { CONNECTIONS, PER_IP, HANDSHAKE_RATE, STARTUP_RAMP, PER_SUBJECT }

    /** The ramp admits this much faster than an even spread, so clients that keep to it are not refused. */
    static final double RAMP_SLACK = 1.25;

    /**
     * How long an armed ramp waits for its first client. A client whose reconnects failed while
     * the server was down backs off up to 60 s (protocol/README.md), so the herd arrives within
     * that; a server nobody comes back to stops ramping then.
     */
    static final long RAMP_ARMED_FOR_MILLIS = 60_000;

    /**
     * The shortest span a ramp's refusal hints are drawn from. Below a second a refused client
     * would come straight back to a bucket that holds at most 100 ms worth.
     */
    static final long RAMP_MIN_HINT_MILLIS = 1_000;

    /** {@code limit} is null and {@code retryMs} 0 when admitted. */
    public record Decision(boolean admitted, Limit limit, String reason, long retryMs) {
        static final Decision ADMITTED = new Decision(true, null, null, 0);
    }

    private final int maxConnections;
    private final int maxPerIp;
    private final int maxPerSubject;
    private final RetryHints hints;
    private final TokenBucket handshakes;
    private final AtomicInteger connections = new AtomicInteger();
    private final LongSupplier nanoTime;
    /** Set by {@link #startRamp}; the window opens at the first upgrade, or lapses unopened. */
    private volatile boolean rampArmed;
    private volatile long rampArmedUntilNanos;
    private volatile int rampExpected;
    private volatile long rampWindowMillis;
    /** The open ramp; null before it opens and after it ended. */
    private volatile Ramp ramp;
    private final ConcurrentHashMap<String, AtomicInteger> perIp = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, AtomicInteger> perSubject = new ConcurrentHashMap<>();

    public AdmissionControl(Limits limits, RetryHints hints) {
        this(limits, hints, System::nanoTime);
    }

    AdmissionControl(Limits limits, RetryHints hints, LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
        this.maxConnections = limits.maxConnections();
        this.maxPerIp = limits.maxConnectionsPerIp();
        this.maxPerSubject = limits.maxConnectionsPerSubject();
        this.hints = hints;
        this.handshakes = new TokenBucket(limits.maxHandshakesPerSecond(), nanoTime.getAsLong());
    }

    /**
     * After a start, admit the {@code expected} clients of the previous run no faster than an
     * even spread over {@code windowMillis} (plus slack). After a crash no client got a retry
     * hint, so their own jitter is all that spreads them; the ramp turns a bunch into 1013s whose
     * hints place the extra clients later, within the time the rest of them needs at the ramp's rate.
     *
     * <p>The window opens at the first upgrade after this call, not at the call: a server that is
     * ready late (a long recovery, a slow supervisor) meets the herd when most of a window counted
     * from the start would have passed (one run let 35 % of the clients in within a second). An
     * armed ramp that sees no upgrade for {@value #RAMP_ARMED_FOR_MILLIS} ms lapses.
     *
     * <p>The ramp ends when {@code expected} connections are open, not when the window has passed: the
     * clients it refused late, and those still backing off from reconnects that failed while the
     * server was down, would otherwise all come back to no limit at all (a single-node restart let
     * 29–34 % of its clients in within the second after a window that ended on the clock). A ramp
     * whose clients do not all come back (some went to other nodes, some away for good) ends
     * {@code max(windowMillis, 60 s)} after it opened: the clients' longest backoff has passed by
     * then.
     */
    public void startRamp(int expected, long windowMillis) {
        if (expected <= 0 || windowMillis <= 0) {
            return;
        }
        rampExpected = expected;
        rampWindowMillis = windowMillis;
        rampArmedUntilNanos = nanoTime.getAsLong() + RAMP_ARMED_FOR_MILLIS * 1_000_000L;
        rampArmed = true;
    }

    /** Opens an armed ramp's window at {@code now}, the first upgrade's time, unless it lapsed. */
    private synchronized void openRamp(long now) {
        if (!rampArmed) {
            return; // another upgrade opened it first
        }
        if (now - rampArmedUntilNanos >= 0) {
            rampArmed = false;
            log.info("start-up ramp lapsed: no client came back within {} ms of the start", RAMP_ARMED_FOR_MILLIS);
            return;
        }
        // the ramp before the flag: an upgrade that sees the flag down must see the ramp
        ramp = new Ramp(rampExpected, RAMP_SLACK * rampExpected * 1000.0 / rampWindowMillis,
                now + Math.max(rampWindowMillis, RAMP_ARMED_FOR_MILLIS) * 1_000_000L, now);
        rampArmed = false;
    }

    /**
     * How many connections a start-up ramp still expects back in all (armed or open), 0 without
     * one: what the connection-count checkpoint should keep meanwhile, since the clients back so
     * far are only part of them and a crash now would otherwise leave the next start expecting
     * that part.
     */
    public int rampExpected() {
        long now = nanoTime.getAsLong();
        Ramp r = ramp;
        if (r != null ? now - r.endsNanos < 0 : rampArmed && now - rampArmedUntilNanos < 0) {
            return rampExpected; // on the clock, not only on the next upgrade: a ramp nobody opens lapses
        }
        return 0;
    }

    private synchronized void endRamp(Ramp r, String why) {
        if (ramp == r) {
            ramp = null;
            log.info("start-up ramp over: {}, {} connection(s) of {} expected after {} ms", why, connections.get(),
                    r.expected, (nanoTime.getAsLong() - r.openedNanos) / 1_000_000);
        }
    }

    /** An open start-up ramp: its bucket, and how many connections it waits for. */
    private static final class Ramp {
        final int expected;
        final double ratePerSecond;
        final long openedNanos;
        final long endsNanos;
        final TokenBucket bucket;

        Ramp(int expected, double ratePerSecond, long endsNanos, long now) {
            this.expected = expected;
            this.ratePerSecond = ratePerSecond;
            this.openedNanos = now;
            this.endsNanos = endsNanos;
            this.bucket = new TokenBucket(ratePerSecond, Math.max(1.0, ratePerSecond / 10), now); // ≤ 100 ms at once
        }

        boolean tryAcquire(long now) {
            synchronized (bucket) {
                return bucket.tryAcquire(now);
            }
        }

        /** How long the clients not yet back need at the ramp's rate: refused ones are hinted within that. */
        long remainingMillis(int open) {
            int left = Math.max(0, expected - open);
            return Math.max(RAMP_MIN_HINT_MILLIS, (long) (left * 1000.0 / ratePerSecond));
        }
    }

    /** {@link #admit(String, String)} without a token subject (auth.mode none). */
    public Decision admit(String clientIp) {
        return admit(clientIp, null);
    }

    /**
     * Call once per upgraded connection; when admitted, call {@link #release(String, String)} with
     * the same arguments when it closes.
     *
     * @param subject the token's {@code sub}, counted against {@code limits.maxConnectionsPerSubject}; null: none
     */
    public Decision admit(String clientIp, String subject) {
        if (rampArmed) {
            openRamp(nanoTime.getAsLong());
        }
        Ramp r = ramp;
        if (r != null) {
            long now = nanoTime.getAsLong();
            if (now - r.endsNanos >= 0) {
                endRamp(r, "its time is up");
                r = null;
            } else if (!r.tryAcquire(now)) {
                return new Decision(false, Limit.STARTUP_RAMP, "admitting the returning clients gradually",
                        hints.within(r.remainingMillis(connections.get())));
            }
        }
        double rateDeficit;
        synchronized (handshakes) {
            rateDeficit = handshakes.tryAcquire(nanoTime.getAsLong()) ? -1 : handshakes.deficitSeconds();
        }
        if (rateDeficit >= 0) {
            return refuse(Limit.HANDSHAKE_RATE, "upgrade rate over limit", 1 + rateDeficit);
        }
        int total = connections.incrementAndGet();
        if (total > maxConnections) {
            connections.decrementAndGet();
            return refuse(Limit.CONNECTIONS, "server at its connection limit", (double) total / maxConnections);
        }
        int n = acquire(perIp, clientIp, maxPerIp);
        if (n > maxPerIp) {
            connections.decrementAndGet();
            return refuse(Limit.PER_IP, "too many connections from one address", (double) n / maxPerIp);
        }
        if (subject != null) {
            int s = acquire(perSubject, subject, maxPerSubject);
            if (s > maxPerSubject) {
                connections.decrementAndGet();
                releaseOne(perIp, clientIp);
                return refuse(Limit.PER_SUBJECT, "too many connections of one token subject",
                        (double) s / maxPerSubject);
            }
        }
        if (r != null && total >= r.expected) {
            // Open connections, not admissions: a client that comes and goes (a reconnect loop,
            // an early close) must not end the ramp for the ones still away.
            endRamp(r, "the expected clients are back"); // later ones are not part of the herd
        }
        return Decision.ADMITTED;
    }

    /** Counts one more for {@code key} unless over {@code max}; returns the count it would have. */
    private static int acquire(ConcurrentHashMap<String, AtomicInteger> counts, String key, int max) {
        // Counted inside compute so a concurrent release cannot drop the entry between get and increment.
        int[] n = new int[1];
        counts.compute(key, (k, v) -> {
            AtomicInteger c = v == null ? new AtomicInteger() : v;
            n[0] = c.incrementAndGet();
            if (n[0] > max) {
                c.decrementAndGet();
            }
            return c.get() == 0 ? null : c;
        });
        return n[0];
    }

    private static void releaseOne(ConcurrentHashMap<String, AtomicInteger> counts, String key) {
        counts.computeIfPresent(key, (k, v) -> v.decrementAndGet() <= 0 ? null : v);
    }

    public void release(String clientIp) {
        release(clientIp, null);
    }

    public void release(String clientIp, String subject) {
        connections.decrementAndGet();
        releaseOne(perIp, clientIp);
        if (subject != null) {
            releaseOne(perSubject, subject);
        }
    }

    public int connections() {
        return connections.get();
    }

    private Decision refuse(Limit limit, String why, double loadFactor) {
        return new Decision(false, limit, why, hints.overload(loadFactor));
    }
}
