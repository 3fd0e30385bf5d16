package io.pushd.server.history;

import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.topic.TopicHub;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single writer: takes publishes from any thread and runs them in batches through the two
 * steps of a publish, {@link Ingest} (dedupe, sequence, acknowledge) and {@link Apply} (append,
 * sync, fan out). Per event, in the batch's order: dedupe, sequence, append; then per batch: sync,
 * answer the repeated keys, answer and fan out each appended event. One batch at a time (the
 * {@link #writing} lock) means sequences are handed out and stored in the same order.
 *
 * <p>Who runs a batch: the writer thread, which takes what is queued; or, given {@code inlineAllowed},
 * the publishing thread itself (an event loop) when nothing is queued, taken or running, for its
 * one publish. That saves a publish two wake-ups, to the writer and back to the loop, each 1-8 ms
 * on a core shared with a busy fan-out. Only where a batch does not wait on anything but memory:
 * a local sequencer and no fsync (with a shared sequencer, a Redis round trip, or an msync per
 * batch, every publish goes through the queue), an event of at most {@link #INLINE_MAX_BYTES}
 * (a larger one is copied and checksummed at length), and while the store says it can append at
 * once ({@code inlineAllowed}: not while the disk is full, when each append probes it). The rest
 * of an append's rare slow steps (a 1 MiB {@code fallocate} ahead of the log, the hourly file's
 * roll) then fall on the loop, as they fell on the writer. Under load the queue is rarely empty
 * and the writer thread batches as before.
 */
public final class Publisher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Publisher.class);
    private static final int MAX_BATCH = 1024;
    /** The largest event a publishing thread runs itself (see the class doc). */
    static final int INLINE_MAX_BYTES = 16 * 1024;

    /** {@code created} is false when an idempotency key matched an earlier publish. */
    public record Result(long seq, boolean created, String epoch) {

        /** @param epoch the ID's epoch when the sequencer told it (one per topic), else null: ask the history */
        public Result {
        }

        public Result(long seq, boolean created) {
            this(seq, created, null);
        }
    }

    /** A publish as queued for the writer; {@code key} is its idempotency key or null. */
    record Request(String topic, byte[] data, String key, CompletableFuture<Result> answer, long acceptedNanos)
            implements Sequencer.Publish {

        boolean isWakeUp() {
            return answer == null;
        }
    }

    /** Queued only to wake the writer for {@link #runOnWriter}; carries no publish. */
    private static final Request WAKE_UP = new Request(null, null, null, null, 0);

    private final List<Runnable> writerTasks = new ArrayList<>();
    private final Ingest ingest;
    private final Apply apply;
    private final BlockingQueue<Request> pending;
    /** Held while a batch runs, by the writer thread or a publishing thread (see {@link #mayRunHere}). */
    private final ReentrantLock writing = new ReentrantLock();
    /** Guarded by {@link #writing}: the batch being run, reused. */
    private final PublishBatch batch = new PublishBatch(MAX_BATCH);
    /**
     * Null: every publish goes through the queue. Else a publishing thread may run its publish
     * itself when the writer is idle, asked before each such run: whether the store can append at once.
     */
    private final BooleanSupplier inlineAllowed;
    /** Set by the writer thread from taking requests off the queue until it has run them. */
    private volatile boolean claimed;
    private final Thread writer;
    private volatile boolean accepting = true;

    /** @param clock the append time of events, in epoch milliseconds */
    public Publisher(EventHistory history, Sequencer sequencer, TopicHub hub, ServerMetrics metrics, LongSupplier clock,
                     int queueCapacity) {
        this(history, sequencer, hub, metrics, clock, queueCapacity, null);
    }

    /**
     * @param inlineAllowed non-null: a publishing thread may run its publish when the writer is idle
     *                      and this says the store can append at once; only for a batch that waits on
     *                      nothing else (a local sequencer, no fsync): the caller is an event loop
     */
    public Publisher(EventHistory history, Sequencer sequencer, TopicHub hub, ServerMetrics metrics, LongSupplier clock,
                     int queueCapacity, BooleanSupplier inlineAllowed) {
        if (inlineAllowed != null && sequencer.storesEvents()) {
            throw new IllegalArgumentException("a sequencer that stores events waits on the network: not on the caller");
        }
        this.inlineAllowed = inlineAllowed;
        this.ingest = new Ingest(history, sequencer, metrics);
        this.apply = new Apply(history, hub, clock);
        this.pending = new ArrayBlockingQueue<>(queueCapacity);
        this.writer = new Thread(this::run, "push-writer");
        this.writer.setDaemon(true);
        this.writer.start();
    }

    /**
     * Queues a publish. Fails with {@link RejectedExecutionException} at once when the queue is
     * full or the publisher is closed (the caller answers 503).
     */
    public CompletableFuture<Result> publish(String topic, byte[] data, String idempotencyKey) {
        CompletableFuture<Result> answer = new CompletableFuture<>();
        Request request = new Request(topic, data, idempotencyKey, answer, System.nanoTime());
        if (mayRunHere(data) && writing.tryLock()) {
            try {
                // Re-read under the lock: close() takes it before it stops, so nothing runs after.
                // The queue may have filled meanwhile; this publish goes first, the writer takes those.
                if (accepting) {
                    batch.requests.add(request);
                    runBatch();
                    return answer;
                }
            } finally {
                writing.unlock();
            }
        }
        if (!accepting || !pending.offer(request)) {
            answer.completeExceptionally(new RejectedExecutionException(accepting ? "writer queue full" : "closed"));
        }
        return answer;
    }

    /** Runs {@code task} on the writer thread between batches (retention, so it needs no lock). */
    public CompletableFuture<Void> runOnWriter(Runnable task) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        synchronized (writerTasks) {
            writerTasks.add(() -> {
                try {
                    task.run();
                    done.complete(null);
                } catch (Throwable t) {
                    done.completeExceptionally(t);
                }
            });
        }
        pending.offer(WAKE_UP);
        return done;
    }

    private void run() {
        while (true) {
            Request first;
            try {
                first = pending.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (first == null && accepting && !hasWriterTasks()) {
                continue; // idle: the lock stays free for a publishing thread
            }
            claimed = first != null; // taken off the queue: publishing threads wait their turn behind it
            writing.lock();
            try {
                runWriterTasks();
                if (first == null) {
                    if (!accepting && pending.isEmpty()) {
                        return;
                    }
                    continue;
                }
                batch.requests.add(first);
                pending.drainTo(batch.requests, MAX_BATCH - 1);
                runBatch();
            } finally {
                claimed = false;
                writing.unlock();
            }
        }
    }

    /** Holding {@link #writing}: runs {@link #batch} and clears it; a failure answers each of its publishes. */
    private void runBatch() {
        try {
            process(batch);
        } catch (Throwable t) {
            log.error("writer loop error", t);
            for (Request r : batch.requests) {
                if (!r.isWakeUp()) {
                    r.answer().completeExceptionally(t);
                }
            }
        } finally {
            batch.clear();
        }
    }

    private void process(PublishBatch batch) {
        Sequencer.Numbers numbers = ingest.reserve(batch.requests);
        for (Request r : batch.requests) {
            if (r.isWakeUp()) {
                continue;
            }
            try {
                if (ingest.sequencerStores()) {
                    long seq = numbers.next(r.topic()); // already stored, or an earlier answer
                    if (!ingest.answeredBefore(r, seq, numbers, batch)) {
                        apply.append(r, seq, numbers, batch);
                    }
                } else if (!ingest.deduplicate(r, batch)) {
                    apply.append(r, numbers.next(r.topic()), numbers, batch);
                }
            } catch (RuntimeException e) {
                ingest.refuse(r, e);
            }
        }
        apply.commit(batch, ingest);
    }

    /**
     * Whether the publishing thread may run a publish of {@code data} itself: allowed, small, and the
     * writer idle (nothing queued or taken off the queue, nobody waiting for the lock); never from
     * inside a batch on this thread (a callback), which is queued rather than nested.
     */
    private boolean mayRunHere(byte[] data) {
        return inlineAllowed != null && accepting && data.length <= INLINE_MAX_BYTES && pending.isEmpty()
                && !claimed && !writing.isHeldByCurrentThread() && !writing.hasQueuedThreads()
                && inlineAllowed.getAsBoolean();
    }

    private boolean hasWriterTasks() {
        synchronized (writerTasks) {
            return !writerTasks.isEmpty();
        }
    }

    /** Whether a publishing thread may run its own publish (store.appendOnEventLoop, where it applies). */
    public boolean callerRuns() {
        return inlineAllowed != null;
    }

    /** Tests: no batch running and nothing queued, so a publishing thread that may run its publish will. */
    boolean idle() {
        return !writing.isLocked() && pending.isEmpty();
    }

    private void runWriterTasks() {
        List<Runnable> tasks;
        synchronized (writerTasks) {
            if (writerTasks.isEmpty()) {
                return;
            }
            tasks = new ArrayList<>(writerTasks);
            writerTasks.clear();
        }
        tasks.forEach(Runnable::run);
    }

    /** Stops taking publishes, finishes the queued ones, and stops the writer thread. */
    @Override
    public void close() throws InterruptedException {
        // Under the lock, so a publishing thread running its own publish has finished or sees it; a
        // loop stuck in a page fault of a hung disk does not hold the stop up for longer than the join's.
        boolean locked = writing.tryLock(10, TimeUnit.SECONDS);
        accepting = false;
        if (locked) {
            writing.unlock();
        }
        writer.join(10_000);
        if (writing.tryLock(10, TimeUnit.SECONDS)) { // the writer's last batch, if it is still running one
            try {
                runWriterTasks();
            } finally {
                writing.unlock();
            }
        }
        // A publish that raced with close() may have landed after the writer's last look: refuse it
        // (the caller answers 503 and the client retries with its Idempotency-Key).
        Request late;
        while ((late = pending.poll()) != null) {
            if (late != WAKE_UP) {
                late.answer().completeExceptionally(new RejectedExecutionException("closed"));
            }
        }
    }
}
