package io.pushd.server.lifecycle;

import java.util.function.LongSupplier;

/**
 * When a client should come back that this server takes in only to send away because it is not
 * serving: the {@code retryMs} of the 1012 that ends a WebSocket or SSE session opened while
 * the server is starting or stopping. Thread-safe: the start and the drain set it, event loops read it.
 * <ul>
 *   <li><b>Starting.</b> A single node opens its port before its warm-ups, which take seconds, so
 *       that clients reconnecting after a crash hear when to come back instead of being refused:
 *       a refused client backs off blind, and the next attempts wait up to 10, 20, 40 s (measured
 *       before: 1,000 clients were back 9 to 64 s after a crash, the server ready at 9 s). They
 *       are sent to the expected end of the start plus the reconnect window for the clients
 *       expected back, the window the start-up ramp admits them over. A start that runs past its
 *       estimate (a loaded machine; the returning clients' own handshakes slow the warm-ups) is
 *       taken to be two thirds done: a client who comes back meanwhile is sent again half the
 *       time the start has taken so far on, at least {@link #MIN_STARTING_MILLIS}, so that the
 *       clients do not come back every few seconds to a start that their handshakes slow down
 *       further (seen under CI load with a fixed second: 3.3 handshakes a client, ready at 22 s).</li>
 *   <li><b>Stopping.</b> After the drain's offset (a single node's own restart,
 *       {@code drain.expectRestart}; 0 in a cluster) and within {@code drain.minWindow}.</li>
 * </ul>
 */
public final class ReturnPlan {

    /** The least a client is sent away for while the server starts: the start may end any moment, but not in a loop. */
    static final long MIN_STARTING_MILLIS = 1_000;
    /**
     * The longest expected start a client is sent past: an estimate read from a file may be
     * anything, and a start that really takes longer sends a client that comes back again.
     */
    static final long MAX_STARTING_MILLIS = 60_000;

    private final Lifecycle lifecycle;
    private final RetryHints hints;
    private final LongSupplier nanoTime;
    private volatile long listeningAtNanos;
    private volatile long readyAtNanos;
    private volatile long startWindowMillis;
    private volatile long afterDrainMillis;

    public ReturnPlan(Lifecycle lifecycle, RetryHints hints) {
        this(lifecycle, hints, System::nanoTime);
    }

    ReturnPlan(Lifecycle lifecycle, RetryHints hints, LongSupplier nanoTime) {
        this.lifecycle = lifecycle;
        this.hints = hints;
        this.nanoTime = nanoTime;
        this.listeningAtNanos = nanoTime.getAsLong();
        this.readyAtNanos = listeningAtNanos;
        this.startWindowMillis = hints.windowMillis(0);
    }

    /**
     * The port is open and the start goes on for about {@code remainingMillis}; about
     * {@code expectedClients} are coming back (the connection count the last run kept).
     */
    public void listening(long remainingMillis, int expectedClients) {
        startWindowMillis = hints.windowMillis(expectedClients);
        long now = nanoTime.getAsLong();
        listeningAtNanos = now;
        readyAtNanos = now + Math.min(MAX_STARTING_MILLIS, Math.max(0, remainingMillis)) * 1_000_000L;
    }

    /** Milliseconds from the drain's first close until this node's clients can be served again (0: at once). */
    public void afterDrain(long millis) {
        afterDrainMillis = Math.max(0, millis);
    }

    public long afterDrainMillis() {
        return afterDrainMillis;
    }

    /** The hint for a client that arrived now and is sent away because the server is not serving. */
    public long hint() {
        if (lifecycle.state() == ServerState.STARTING) {
            long now = nanoTime.getAsLong();
            long left = Math.max((readyAtNanos - now) / 1_000_000L, (now - listeningAtNanos) / 2_000_000L);
            return Math.min(MAX_STARTING_MILLIS, Math.max(MIN_STARTING_MILLIS, left)) + hints.within(startWindowMillis);
        }
        return afterDrainMillis + hints.single();
    }
}
