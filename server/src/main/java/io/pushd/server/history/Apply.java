package io.pushd.server.history;

import io.pushd.server.history.Publisher.Request;
import io.pushd.server.history.Publisher.Result;
import io.pushd.server.topic.TopicHub;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The second step of a publish: append to the history, sync the batch (group commit), fan out.
 * The rule every live subscriber relies on lives here: an event is fanned out only after it was
 * appended and synced, so a subscriber that registers meanwhile finds it in the history instead.
 * The publisher's writer only (one batch at a time, see {@link Publisher}).
 */
final class Apply {

    private static final Logger log = LoggerFactory.getLogger(Apply.class);

    private final EventHistory history;
    private final TopicHub hub;
    private final LongSupplier clock;

    Apply(EventHistory history, TopicHub hub, LongSupplier clock) {
        this.history = history;
        this.hub = hub;
        this.clock = clock;
    }

    /**
     * Appends {@code r} as {@code seq}; when the history refuses it, gives the number back (a refused
     * publish burns none) and rethrows.
     */
    void append(Request r, long seq, Sequencer.Numbers numbers, PublishBatch batch) {
        long ts = numbers.timestampMillis() >= 0 ? numbers.timestampMillis() : clock.getAsLong();
        try {
            history.append(r.topic(), seq, ts, r.key(), r.data());
        } catch (RuntimeException e) {
            numbers.release(r.topic(), seq); // nothing was stored: the number is not used
            throw e;
        }
        batch.appended(r, seq, ts, numbers.epoch());
    }

    /**
     * Ends the batch: one sync if it appended anything (with fsync, one fsync for the whole batch:
     * group commit), then the repeated keys are answered, then each appended event is acknowledged
     * through {@code ingest} and fanned out.
     */
    void commit(PublishBatch batch, Ingest ingest) {
        // A repeated key is synced too: its original may be an append whose sync failed, still pending.
        if (!batch.appended.isEmpty() || !batch.deduplicated.isEmpty()) {
            try {
                history.sync();
            } catch (RuntimeException e) {
                notDurable(batch, e);
                return;
            }
        }
        ingest.acknowledgeDuplicates(batch);
        long appendedNanos = System.nanoTime();
        for (int i = 0; i < batch.appended.size(); i++) {
            Request r = batch.appended.get(i);
            Result res = batch.results.get(i);
            ingest.acknowledge(r, res, appendedNanos);
            if (history.fansOutItself()) {
                continue; // the history fans out in order, with the events of other nodes
            }
            try {
                hub.fanOut(r.topic(), res.seq(), batch.timestamps.get(i), r.data(), appendedNanos);
            } catch (RuntimeException e) {
                log.error("fan-out of topic {} failed", r.topic(), e);
            }
        }
    }

    /**
     * The sync failed: the appended events are in the log but not known to be durable (and stay
     * invisible until a later sync succeeds), so none is acknowledged or fanned out; each is
     * answered "may be stored, retry with the same key", which then gets its original number.
     */
    private static void notDurable(PublishBatch batch, RuntimeException cause) {
        log.error("sync of a batch of {} appended event(s) failed; answered 503 (may be stored)",
                batch.appended.size(), cause);
        NotDurableException e = new NotDurableException(cause);
        batch.appended.forEach(r -> r.answer().completeExceptionally(e));
        batch.deduplicated.forEach(r -> r.answer().completeExceptionally(e));
    }
}
