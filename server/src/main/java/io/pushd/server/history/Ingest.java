package io.pushd.server.history;

import io.pushd.server.history.Publisher.Request;
import io.pushd.server.history.Publisher.Result;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.store.StorageFullException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first step of a publish: dedupe (an idempotency key seen before gets its first answer),
 * sequence, and acknowledge. When the acknowledgement goes out is the history's promise: the
 * local history acknowledges after {@link Apply} appended and synced the batch (an acknowledged
 * event survives what fsync promises); a history whose sequencer stores the event with its number
 * (a shared one in Redis) may acknowledge as soon as the sequencer answered, then apply locally.
 * The publisher's writer only (one batch at a time, see {@link Publisher}).
 */
final class Ingest {

    private static final Logger log = LoggerFactory.getLogger(Ingest.class);

    private final EventHistory history;
    private final Sequencer sequencer;
    private final ServerMetrics metrics;
    private final List<String> topics = new ArrayList<>();
    private final List<Request> publishes = new ArrayList<>();

    Ingest(EventHistory history, Sequencer sequencer, ServerMetrics metrics) {
        this.history = history;
        this.sequencer = sequencer;
        this.metrics = metrics;
    }

    /** Asks the sequencer for the batch's numbers, once per batch, and waits for its answer. */
    Sequencer.Numbers reserve(List<Request> batch) {
        topics.clear();
        publishes.clear();
        for (Request r : batch) {
            if (!r.isWakeUp()) {
                topics.add(r.topic());
                publishes.add(r);
            }
        }
        try {
            return (sequencer.storesEvents() ? sequencer.reserve(topics, publishes) : sequencer.reserve(topics))
                    .toCompletableFuture().join();
        } catch (CompletionException e) {
            // the sequencer's own refusal (a shared one: 503 while Redis is away), not a wrapper
            throw e.getCause() instanceof RuntimeException re ? re : e;
        }
    }

    boolean sequencerStores() {
        return sequencer.storesEvents();
    }

    /**
     * For a sequencer that stores events: true when it answered {@code r}'s idempotency key with
     * an earlier event ({@code seq}); then {@code r} is answered with it after the batch.
     */
    boolean answeredBefore(Request r, long seq, Sequencer.Numbers numbers, PublishBatch batch) {
        if (numbers.created()) {
            return false;
        }
        metrics.deduplicated();
        batch.deduplicated(r, seq, numbers.epoch());
        return true;
    }

    /**
     * True when {@code r}'s idempotency key was given a sequence before (possibly earlier in this
     * batch): then {@code r} is answered with it after the batch's sync, as the original may be in
     * this batch.
     */
    boolean deduplicate(Request r, PublishBatch batch) {
        if (r.key() == null) {
            return false;
        }
        long existing = history.findByIdempotencyKey(r.topic(), r.key());
        if (existing <= 0) {
            return false;
        }
        metrics.deduplicated();
        batch.deduplicated(r, existing);
        return true;
    }

    /** Answers a publish that was not stored; nothing of it is visible and no number was used. */
    void refuse(Request r, RuntimeException e) {
        if (e instanceof StorageFullException) {
            metrics.refusedForStorage(); // the store logs the change of state, once
        } else if (!(e instanceof TopicLimitException) && !(e instanceof RejectedExecutionException)) {
            // a refusal (too many topics, a shared history away: logged once by it), not a fault of the store
            log.error("append to topic {} failed", r.topic(), e);
        }
        r.answer().completeExceptionally(e);
    }

    /** Answers the batch's repeated idempotency keys with their original sequence. */
    void acknowledgeDuplicates(PublishBatch batch) {
        for (int i = 0; i < batch.deduplicated.size(); i++) {
            batch.deduplicated.get(i).answer().complete(batch.dedupResults.get(i));
        }
    }

    /** Answers one stored publish. */
    void acknowledge(Request r, Result result, long appendedNanos) {
        metrics.published(r.acceptedNanos(), appendedNanos);
        r.answer().complete(result);
    }
}
