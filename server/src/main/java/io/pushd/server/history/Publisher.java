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
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single writer: takes publishes from any thread and runs them in batches through the two
 * steps of a publish, {@link Ingest} (dedupe, sequence, acknowledge) and {@link Apply} (append,
 * sync, fan out). Per event, in the batch's order: dedupe, sequence, append; then per batch: sync,
 * answer the repeated keys, answer and fan out each appended event. One thread means sequences
 * are handed out and stored in the same order, with no lock on the hot path.
 */
public final class Publisher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Publisher.class);
    private static final int MAX_BATCH = 1024;

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
    private final Thread writer;
    private volatile boolean accepting = true;

    /** @param clock the append time of events, in epoch milliseconds */
    public Publisher(EventHistory history, Sequencer sequencer, TopicHub hub, ServerMetrics metrics, LongSupplier clock,
                     int queueCapacity) {
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
        if (!accepting || !pending.offer(new Request(topic, data, idempotencyKey, answer, System.nanoTime()))) {
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
        PublishBatch batch = new PublishBatch(MAX_BATCH);
        while (true) {
            try {
                Request first = pending.poll(100, TimeUnit.MILLISECONDS);
                runWriterTasks();
                if (first == null) {
                    if (!accepting && pending.isEmpty()) {
                        return;
                    }
                    continue;
                }
                batch.requests.add(first);
                pending.drainTo(batch.requests, MAX_BATCH - 1);
                process(batch);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
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
        accepting = false;
        writer.join(10_000);
        runWriterTasks();
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
