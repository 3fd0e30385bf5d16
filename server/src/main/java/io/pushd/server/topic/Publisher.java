package io.pushd.server.topic;

import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.store.EventStore;
import io.pushd.server.store.StorageFullException;
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
 * The single writer: takes publishes from any thread, gives each its sequence, appends it, syncs
 * the batch when fsync is on, then answers and fans out. One thread means sequences are handed
 * out and stored in the same order, with no lock on the hot path.
 */
public final class Publisher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Publisher.class);
    private static final int MAX_BATCH = 1024;

    /** {@code created} is false when an idempotency key matched an earlier publish. */
    public record Result(long seq, boolean created) {
    }

    private record Request(String topic, byte[] data, String key, CompletableFuture<Result> answer,
                           long acceptedNanos) {
    }

    /** Queued only to wake the writer for {@link #runOnWriter}; carries no publish. */
    private static final Request WAKE_UP = new Request(null, null, null, null, 0);

    private final List<Runnable> writerTasks = new ArrayList<>();
    private final EventStore store;
    private final Sequencer sequencer;
    private final TopicHub hub;
    private final ServerMetrics metrics;
    private final LongSupplier clock;
    private final BlockingQueue<Request> pending;
    private final Thread writer;
    private volatile boolean accepting = true;

    public Publisher(EventStore store, Sequencer sequencer, TopicHub hub, ServerMetrics metrics, LongSupplier clock,
                     int queueCapacity) {
        this.store = store;
        this.sequencer = sequencer;
        this.hub = hub;
        this.metrics = metrics;
        this.clock = clock;
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
        List<Request> batch = new ArrayList<>(MAX_BATCH);
        List<Request> appended = new ArrayList<>(MAX_BATCH);
        List<Result> results = new ArrayList<>(MAX_BATCH);
        List<Long> timestamps = new ArrayList<>(MAX_BATCH);
        List<Request> deduplicated = new ArrayList<>();
        List<Result> dedupResults = new ArrayList<>();
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
                batch.add(first);
                pending.drainTo(batch, MAX_BATCH - 1);
                for (Request r : batch) {
                    if (r == WAKE_UP) {
                        continue;
                    }
                    try {
                        if (r.key() != null) {
                            long existing = store.findByIdempotencyKey(r.topic(), r.key());
                            if (existing > 0) {
                                // answered after this batch's sync: the original may be in this batch
                                metrics.deduplicated();
                                deduplicated.add(r);
                                dedupResults.add(new Result(existing, false));
                                continue;
                            }
                        }
                        long seq = sequencer.next(r.topic());
                        long ts = clock.getAsLong();
                        try {
                            store.append(r.topic(), seq, ts, r.key(), r.data());
                        } catch (RuntimeException e) {
                            sequencer.release(r.topic(), seq); // nothing was stored: the number is not used
                            throw e;
                        }
                        appended.add(r);
                        results.add(new Result(seq, true));
                        timestamps.add(ts);
                    } catch (StorageFullException e) {
                        metrics.refusedForStorage(); // the store logs the change of state, once
                        r.answer().completeExceptionally(e);
                    } catch (TopicLimitException e) {
                        r.answer().completeExceptionally(e); // a refusal, not a fault of the store
                    } catch (RuntimeException e) {
                        log.error("append to topic {} failed", r.topic(), e);
                        r.answer().completeExceptionally(e);
                    }
                }
                if (!appended.isEmpty()) {
                    store.sync(); // one fsync per batch when enabled: group commit
                }
                for (int i = 0; i < deduplicated.size(); i++) {
                    deduplicated.get(i).answer().complete(dedupResults.get(i));
                }
                long appendedNanos = System.nanoTime();
                for (int i = 0; i < appended.size(); i++) {
                    Request r = appended.get(i);
                    Result res = results.get(i);
                    metrics.published(r.acceptedNanos(), appendedNanos);
                    r.answer().complete(res);
                    try {
                        hub.fanOut(r.topic(), res.seq(), timestamps.get(i), r.data(), appendedNanos);
                    } catch (RuntimeException e) {
                        log.error("fan-out of topic {} failed", r.topic(), e);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Throwable t) {
                log.error("writer loop error", t);
                for (Request r : batch) {
                    if (r.answer() != null) {
                        r.answer().completeExceptionally(t);
                    }
                }
            } finally {
                batch.clear();
                appended.clear();
                results.clear();
                timestamps.clear();
                deduplicated.clear();
                dedupResults.clear();
            }
        }
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
