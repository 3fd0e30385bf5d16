package io.pushd.server.lifecycle;

import io.pushd.protocol.CloseCode;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.session.Session;
import io.pushd.server.session.Sessions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The orderly stop used for SIGTERM, up to the point where the server closes:
 * <ol>
 *   <li>DRAINING: readiness off, and for {@code drain.lbGrace} still serving, so the balancer
 *       stops sending new clients before anything is refused;</li>
 *   <li>CLOSING: new work refused; every open session is closed with 1012 and a hint that
 *       brings it back within {@link #CLOSE_PACING} plus {@link RetryHints#windowMillis} (the
 *       window the fleet needs to take them back), the returns planned evenly over that span,
 *       the closes paced over {@link #CLOSE_PACING}; the span begins when the server says the
 *       clients can be served again (at once, or once a restarted single node is up);</li>
 *   <li>waiting for the closing handshakes, bounded by {@code drain.deadline} less
 *       {@link #STOP_RESERVE} and by {@link #MAX_HANDSHAKE_WAIT}.</li>
 * </ol>
 * Sessions are closed through {@link Session#close}, so every transport drains the same way.
 */
public final class Drainer {

    private static final Logger log = LoggerFactory.getLogger(Drainer.class);

    /** Closes go out over this long, in {@link #CLOSE_SLICES} slices, so event loops stay responsive. */
    static final Duration CLOSE_PACING = Duration.ofSeconds(1);
    static final int CLOSE_SLICES = 20;
    /** Kept back from {@code drain.deadline} for the stop after the handshakes (publisher, store). */
    static final Duration STOP_RESERVE = Duration.ofSeconds(2);
    /** Closing handshakes that take longer than this are cut by the stop (each is force-closed in 3 s anyway). */
    static final Duration MAX_HANDSHAKE_WAIT = Duration.ofSeconds(5);
    /**
     * The longest a drain keeps the process after its first close (the pacing, then the wait for
     * the closing handshakes): a restart's next process cannot start before this has passed.
     */
    public static final Duration LONGEST_CLOSE = CLOSE_PACING.plus(MAX_HANDSHAKE_WAIT);

    private final ServerConfig.Drain config;
    private final Lifecycle lifecycle;
    private final RetryHints hints;
    private final Sessions sessions;
    private final IntConsumer expectBack;
    /** Milliseconds from the first close until the clients can be served again (0: at once). */
    private final LongSupplier returnsAfter;
    /** Thread.sleep, as a rule: a test makes one pause overrun, as on a starved core. */
    private final Consumer<Duration> pause;

    /**
     * @param expectBack told how many sessions are about to be closed (the next start expects
     *                   them back, see {@link ConnectionCountCheckpoint})
     */
    public Drainer(ServerConfig.Drain config, Lifecycle lifecycle, RetryHints hints, Sessions sessions,
                   IntConsumer expectBack, LongSupplier returnsAfter) {
        this(config, lifecycle, hints, sessions, expectBack, returnsAfter, Drainer::sleep);
    }

    /**
     * @param returnsAfter milliseconds from the first close until the clients can be served
     *                     again: where the planned returns begin (asked at the drain)
     */
    Drainer(ServerConfig.Drain config, Lifecycle lifecycle, RetryHints hints, Sessions sessions,
            IntConsumer expectBack, LongSupplier returnsAfter, Consumer<Duration> pause) {
        this.config = config;
        this.lifecycle = lifecycle;
        this.hints = hints;
        this.sessions = sessions;
        this.expectBack = expectBack;
        this.returnsAfter = returnsAfter;
        this.pause = pause;
    }

    /**
     * Runs the drain on the calling thread; returns when the sessions are closed or the wait is
     * over. False (and nothing done) when the server was already draining or past it.
     */
    public boolean drain() {
        if (!lifecycle.advanceTo(ServerState.DRAINING)) {
            return false;
        }
        long deadline = System.nanoTime() + config.deadline().toNanos();
        log.info("draining: readiness off, {} live connection(s)", sessions.size());
        pause.accept(config.lbGrace());
        lifecycle.advanceTo(ServerState.CLOSING);

        List<Session> open = sessions.snapshot();
        expectBack.accept(open.size());
        long windowMillis = hints.windowMillis(open.size());
        long afterMillis = Math.max(0, returnsAfter.getAsLong());
        if (afterMillis == 0) {
            log.info("closing {} connection(s) with {} over a {} ms retry window", open.size(),
                    CloseCode.SERVICE_RESTART.describe(), windowMillis);
        } else {
            log.info("closing {} connection(s) with {} over a {} ms retry window from {} ms on (the time this "
                    + "node took to launch and start, and its exit: drain.expectRestart)", open.size(),
                    CloseCode.SERVICE_RESTART.describe(), windowMillis, afterMillis);
        }
        closePaced(open, windowMillis, afterMillis);
        long waitNanos = Math.max(0, deadline - System.nanoTime() - STOP_RESERVE.toNanos());
        Sessions.awaitClosed(open, Duration.ofNanos(Math.min(waitNanos, MAX_HANDSHAKE_WAIT.toNanos())));
        return true;
    }

    /**
     * Closes {@code open} over {@link #CLOSE_PACING} and plans their returns over
     * {@code CLOSE_PACING + windowMillis} from {@code afterMillis} after the first close (all of
     * it later by as much when a restart must come first): the k-th closed (in random order)
     * is due back at a random instant within the k-th of n equal slices of that span, the first
     * at its very start and the last at its very end, and its hint is that instant less the time
     * it was closed. Independent uniform hints would bunch by chance and, for a node's hundred
     * clients, span less than the window by construction (about {@code window × (n-1)/(n+1)});
     * planned returns keep the rate flat and the spread the whole span. The k-th close goes out
     * before its slice begins (slices of the span are at least as long as those of the pacing).
     * When this thread falls behind the plan (not scheduled for a while: a starved core, a pause
     * that overran), the rest of the plan moves by as much: clamped to 0 instead, the hints of
     * every return due meanwhile would bring them all back at once, and the first return would
     * come that much late while the last stays put, so the spread would shrink by the stall
     * (seen: 5.0 s instead of 6 with a second's stall, a third of a node's clients in one second).
     */
    private void closePaced(List<Session> open, long windowMillis, long afterMillis) {
        List<Session> order = new ArrayList<>(open);
        Collections.shuffle(order);
        int n = order.size();
        int perSlice = Math.max(1, (n + CLOSE_SLICES - 1) / CLOSE_SLICES);
        Duration slicePause = CLOSE_PACING.dividedBy(CLOSE_SLICES);
        double spanMillis = CLOSE_PACING.toMillis() + windowMillis;
        long start = System.nanoTime();
        long lagMillis = 0;
        for (int k = 0; k < n; k++) {
            Session s = order.get(k);
            long hint;
            if (n == 1) {
                hint = afterMillis + hints.within(windowMillis);
            } else {
                double slot = k == 0 ? 0 : k == n - 1 ? n : k + ThreadLocalRandom.current().nextDouble();
                long dueMillis = Math.round(spanMillis * slot / n) + lagMillis;
                long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
                if (elapsedMillis > dueMillis) { // behind the plan: the rest of it moves
                    lagMillis += elapsedMillis - dueMillis;
                    dueMillis = elapsedMillis;
                }
                hint = afterMillis + dueMillis - elapsedMillis;
            }
            s.close(CloseCode.SERVICE_RESTART, hint);
            if ((k + 1) % perSlice == 0 && k + 1 < n) {
                pause.accept(slicePause);
            }
        }
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
