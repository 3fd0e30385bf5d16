package io.pushd.loadtest.publish;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongFunction;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * {@code concurrency} publishers, each sending its next event as soon as the previous one was
 * answered, round robin over the topics, until stopped or {@code limit} events were sent. Only a
 * 201 counts as acknowledged; no Idempotency-Key (the bench counts at least, not exactly once).
 */
public final class ClosedLoop {

    /** How long a publisher waits after a failed publish. */
    static final Duration PAUSE_AFTER_FAILURE = Duration.ofMillis(100);
    private static final java.util.concurrent.Executor FAILURE_PAUSE =
            CompletableFuture.delayedExecutor(PAUSE_AFTER_FAILURE.toMillis(), TimeUnit.MILLISECONDS);

    private final TopicsApi api;
    private final List<String> topics;
    private final int concurrency;
    private final LongFunction<String> body;
    private final long limit;
    private final AtomicLong sequence = new AtomicLong();
    private final AtomicLong acked = new AtomicLong();
    private final AtomicLong windowAcked = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLongArray perTopic;
    private final AtomicInteger running = new AtomicInteger();
    private final Recorder latencyMicros = new Recorder(3);
    private volatile boolean stopped;
    private volatile String firstFailure;

    /**
     * @param body  the JSON body of the n-th publish
     * @param limit publishes to send in all ({@link Long#MAX_VALUE}: until stopped)
     */
    public ClosedLoop(TopicsApi api, List<String> topics, int concurrency, LongFunction<String> body, long limit) {
        this.api = api;
        this.topics = List.copyOf(topics);
        this.concurrency = concurrency;
        this.body = body;
        this.limit = limit;
        this.perTopic = new AtomicLongArray(topics.size());
    }

    public void start() {
        for (int i = 0; i < concurrency; i++) {
            running.incrementAndGet();
            next();
        }
    }

    private void next() {
        long n = sequence.getAndIncrement();
        if (stopped || n >= limit) {
            running.decrementAndGet();
            return;
        }
        int ti = (int) (n % topics.size());
        long t0 = System.nanoTime();
        api.publish(topics.get(ti), null, body.apply(n).getBytes(StandardCharsets.UTF_8)).whenComplete((r, err) -> {
            if (err == null && r.status() == 201) {
                latencyMicros.recordValue(Math.max(0, (System.nanoTime() - t0) / 1_000));
                acked.incrementAndGet();
                windowAcked.incrementAndGet();
                perTopic.incrementAndGet(ti);
            } else {
                failures.incrementAndGet();
                if (firstFailure == null) {
                    firstFailure = err != null ? err.toString() : r.status() + " " + r.body();
                }
                // a refusing or absent server is not hammered: this publisher pauses before its next
                FAILURE_PAUSE.execute(this::next);
                return;
            }
            next();
        });
    }

    /** Starts the measured window: counters and latencies from now on. */
    public void resetWindow() {
        windowAcked.set(0);
        latencyMicros.reset();
    }

    /** Acknowledged since {@link #resetWindow()}. */
    public long windowAcked() {
        return windowAcked.get();
    }

    public long acked() {
        return acked.get();
    }

    public long perTopic(int i) {
        return perTopic.get(i);
    }

    /** Failed publishes since the start, the warm-up's too. */
    public long failures() {
        return failures.get();
    }

    public String firstFailure() {
        return firstFailure;
    }

    /** Send → 201, microseconds, since {@link #resetWindow()}. */
    public Histogram latency() {
        return latencyMicros.getIntervalHistogram();
    }

    /** Waits until every publish sent was answered, at most {@code timeout}. */
    public void awaitFinished(Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (running.get() > 0 && System.nanoTime() - end < 0) {
            Thread.sleep(10);
        }
    }

    /** Sends no more and waits for the answers, at most {@code timeout}. */
    public void stopAndAwait(Duration timeout) throws InterruptedException {
        stopped = true;
        awaitFinished(timeout);
    }
}
