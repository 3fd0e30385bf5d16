package io.pushd.server.lifecycle;

import io.pushd.server.config.Limits;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.ServerMessage;
import io.pushd.server.admission.AdmissionControl;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.session.Session;
import io.pushd.server.session.SessionContext;
import io.pushd.server.session.SessionSink;
import io.pushd.server.session.Sessions;
import io.pushd.server.topic.EventFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The drain, on sessions whose transport is a recording sink: no sockets, no WebSocket. */
class DrainerTest {

    /** Records its close; the connection then goes away as a well-behaved client's would. */
    final class RecordingSink implements SessionSink {
        final List<String> closes = new CopyOnWriteArrayList<>();
        volatile long closedAtNanos;
        Session session;

        @Override public String id() { return "fake"; }
        @Override public EventLoop eventLoop() { return loop; }
        @Override public ByteBufAllocator alloc() { return ByteBufAllocator.DEFAULT; }
        @Override public EventFormat format() { return EventFormat.JSON; }
        @Override public void sendEvent(ByteBuf encodedEvent) { encodedEvent.release(); }
        @Override public void send(ServerMessage message) { }
        @Override public void flush() { }
        @Override public boolean isWritable() { return true; }
        @Override public boolean isActive() { return true; }
        @Override public boolean isClosing() { return !closes.isEmpty(); }
        @Override public void abort() { }

        @Override
        public void close(CloseCode code, String reason) {
            closedAtNanos = System.nanoTime();
            closes.add(code.code() + " " + reason);
            loop.execute(session::onDisconnected);
        }
    }

    final DefaultEventLoop loop = new DefaultEventLoop();
    final Lifecycle lifecycle = new Lifecycle();
    final RetryHints hints = new RetryHints(Duration.ofSeconds(5), 1000);
    final Sessions sessions = new Sessions();
    final SessionContext context = new SessionContext(Limits.defaults(), null, null, lifecycle, hints,
            new AdmissionControl(Limits.defaults(), hints), sessions, new ServerMetrics());
    final AtomicInteger expectedBack = new AtomicInteger(-1);

    @AfterEach
    void stopLoop() {
        loop.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS);
    }

    private List<RecordingSink> openSessions(int n) throws Exception {
        List<RecordingSink> sinks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            RecordingSink sink = new RecordingSink();
            sink.session = new Session(sink, context);
            String ip = "192.0.2." + (i % 200);
            assertThat(loop.submit(() -> sink.session.open(ip, List.of())).get()).isTrue();
            sinks.add(sink);
        }
        return sinks;
    }

    private Drainer drainer(Duration lbGrace) {
        return drainer(lbGrace, 0);
    }

    private Drainer drainer(Duration lbGrace, long returnsAfterMillis) {
        return new Drainer(new ServerConfig.Drain(lbGrace, Duration.ofSeconds(5), lbGrace.plusSeconds(3), true),
                lifecycle, hints, sessions, expectedBack::set, () -> returnsAfterMillis);
    }

    @Test
    void everySessionIsClosedOnceWith1012AndAHintWithinThePacingAndTheWindow() throws Exception {
        lifecycle.advanceTo(ServerState.READY);
        List<RecordingSink> sinks = openSessions(30);

        assertThat(drainer(Duration.ZERO).drain()).isTrue();

        assertThat(expectedBack).hasValue(30);
        assertThat(sessions.size()).as("every session disconnected before the drain returned").isZero();
        for (RecordingSink sink : sinks) {
            assertThat(sink.closes).hasSize(1);
            String close = sink.closes.get(0);
            assertThat(close).startsWith(CloseCode.SERVICE_RESTART.code() + " ");
            long retryMs = CloseCode.parseRetryMs(close.substring(5)).orElseThrow();
            assertThat(retryMs).as("back within the pacing and the window")
                    .isBetween(0L, Drainer.CLOSE_PACING.toMillis() + hints.windowMillis(30));
        }
        assertThat(lifecycle.state()).isEqualTo(ServerState.CLOSING);
    }

    @Test
    void theReturnsArePlannedEvenlyOverThePacingPlusTheWindowFromTheFirstToTheLastInstant() throws Exception {
        lifecycle.advanceTo(ServerState.READY);
        int n = 100;
        List<RecordingSink> sinks = openSessions(n);

        assertThat(drainer(Duration.ZERO).drain()).isTrue();

        List<Double> dueMs = dueMillis(sinks);
        double span = Drainer.CLOSE_PACING.toMillis() + hints.windowMillis(n);
        // the first is due at once and the last at the end of the span (±2 ms: hints are whole
        // milliseconds, and the clock is read twice), so a node's hundred clients span 6 s, not ~4.9 s
        assertThat(dueMs.get(0)).isLessThan(2);
        assertThat(dueMs.get(n - 1)).isBetween(span - 2, span + 2);
        double slice = span / n;
        for (int i = 1; i < n; i++) {
            // one return per slice: two neighbours are at most two slices apart (independent
            // uniform hints over 6 s leave gaps of ~4 slices and bunch several into one)
            assertThat(dueMs.get(i) - dueMs.get(i - 1)).as("gap before return %d of %s", i, dueMs)
                    .isLessThanOrEqualTo(2 * slice + 2);
            assertThat(dueMs.get(i)).as("return %d of %s in its own slice", i, dueMs)
                    .isBetween(slice * (i == n - 1 ? n : i) - 2, slice * (i + 1) + 2);
        }
    }

    @Test
    void aRestartToWaitForMovesTheWholePlanLaterByItsLengthAndKeepsItsSpread() throws Exception {
        lifecycle.advanceTo(ServerState.READY);
        int n = 100;
        List<RecordingSink> sinks = openSessions(n);
        long restart = 7_300;

        assertThat(drainer(Duration.ZERO, restart).drain()).isTrue();

        List<Double> dueMs = dueMillis(sinks);
        double span = Drainer.CLOSE_PACING.toMillis() + hints.windowMillis(n);
        // nobody is due back before the restart is over (they would find no server and back
        // off), and from then on the returns are the same even plan over the same span
        assertThat(dueMs.get(0)).isBetween(restart - 2.0, restart + 2.0);
        assertThat(dueMs.get(n - 1)).isBetween(restart + span - 2, restart + span + 2);
        double slice = span / n;
        for (int i = 1; i < n; i++) {
            assertThat(dueMs.get(i) - restart).as("return %d of %s in its own slice", i, dueMs)
                    .isBetween(slice * (i == n - 1 ? n : i) - 2, slice * (i + 1) + 2);
        }
    }

    @Test
    void aSingleSessionWaitsForTheRestartToo() throws Exception {
        lifecycle.advanceTo(ServerState.READY);
        RecordingSink sink = openSessions(1).get(0);

        assertThat(drainer(Duration.ZERO, 4_000).drain()).isTrue();

        long retryMs = CloseCode.parseRetryMs(sink.closes.get(0).substring(5)).orElseThrow();
        assertThat(retryMs).isBetween(4_000L, 4_000L + hints.windowMillis(1));
    }

    @Test
    void aDrainThatFallsBehindItsPlanMovesTheRestOfItInsteadOfSendingThoseDueMeanwhileBackAtOnce() throws Exception {
        lifecycle.advanceTo(ServerState.READY);
        int n = 100;
        List<RecordingSink> sinks = openSessions(n);
        AtomicInteger pauses = new AtomicInteger();
        Drainer stalling = new Drainer(new ServerConfig.Drain(Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(4),
                true),
                lifecycle, hints, sessions, expectedBack::set, () -> 0, d -> {
                    // the first pause between slices overruns by a second, as on a starved core
                    sleepMillis(d.toMillis() + (d.isZero() || pauses.incrementAndGet() != 1 ? 0 : 1_000));
                });

        assertThat(stalling.drain()).isTrue();

        List<Double> dueMs = dueMillis(sinks);
        double span = Drainer.CLOSE_PACING.toMillis() + hints.windowMillis(n);
        assertThat(dueMs.get(n - 1) - dueMs.get(0)).as("first to last of %s", dueMs).isGreaterThanOrEqualTo(span - 2);
        double slice = span / n;
        for (int i = 4; i < n; i++) {
            // clamped hints would bring the ~17 due during the stall back in the same few milliseconds
            assertThat(dueMs.get(i) - dueMs.get(i - 4)).as("returns %d-%d of %s", i - 4, i, dueMs)
                    .isGreaterThan(slice);
        }
    }

    /** When each session is due back (its close plus its hint), from the first close, in order. */
    private static List<Double> dueMillis(List<RecordingSink> sinks) {
        long first = sinks.stream().mapToLong(s -> s.closedAtNanos).min().orElseThrow();
        List<Double> dueMs = new ArrayList<>();
        for (RecordingSink sink : sinks) {
            long retryMs = CloseCode.parseRetryMs(sink.closes.get(0).substring(5)).orElseThrow();
            dueMs.add((sink.closedAtNanos - first) / 1e6 + retryMs);
        }
        dueMs.sort(null);
        return dueMs;
    }

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void duringTheBalancerGraceTheServerIsNotReadyButStillServes() throws Exception {
        lifecycle.advanceTo(ServerState.READY);
        List<RecordingSink> sinks = openSessions(1);
        Thread drain = new Thread(() -> drainer(Duration.ofMillis(400)).drain());
        drain.start();
        Thread.sleep(150);
        assertThat(lifecycle.state()).isEqualTo(ServerState.DRAINING);
        assertThat(lifecycle.isReady()).isFalse();
        assertThat(lifecycle.isServing()).isTrue();
        assertThat(sinks.get(0).closes).as("nothing is closed during the grace").isEmpty();
        drain.join(5_000);
        assertThat(lifecycle.isServing()).isFalse();
        assertThat(sinks.get(0).closes).hasSize(1);
    }

    @Test
    void aSecondDrainDoesNothing() {
        lifecycle.advanceTo(ServerState.READY);
        assertThat(drainer(Duration.ZERO).drain()).isTrue();
        expectedBack.set(-1);
        assertThat(drainer(Duration.ZERO).drain()).isFalse();
        assertThat(expectedBack).as("nothing done").hasValue(-1);
    }

    @Test
    void aSessionOpenedAfterTheDrainBeganIsClosedWith1012AndASingleHint() throws Exception {
        lifecycle.advanceTo(ServerState.CLOSING);
        RecordingSink sink = new RecordingSink();
        sink.session = new Session(sink, context);
        assertThat(loop.submit(() -> sink.session.open("192.0.2.1", List.of())).get()).isFalse();
        assertThat(sink.closes).hasSize(1);
        String close = sink.closes.get(0);
        assertThat(close).startsWith(CloseCode.SERVICE_RESTART.code() + " ");
        assertThat(CloseCode.parseRetryMs(close.substring(5)).orElseThrow()).isBetween(0L, 5_000L);
        assertThat(sessions.size()).isZero();
    }
}
