package io.pushd.server.history;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Gives events their sequence numbers, one batch at a time: the publisher asks once per batch
 * ({@link #reserve}), waits for the answer, and then takes the numbers one event at a time, in the
 * batch's order, on its writer thread ({@link Numbers#next}). The local sequencer answers at once
 * and counts in memory, so a batch costs it nothing more than the counting. A shared one (several
 * nodes behind one balancer) answers after one round trip per batch, however many events it
 * holds, with a block of numbers per topic; publishes queued meanwhile form the next batch, the
 * way fsync's group commit gathers them.
 */
public interface Sequencer {

    /**
     * Gets the numbers of one batch ready. {@code topics} holds the topic of every publish of the
     * batch that may need a number, in order (a topic once per such publish); the list is reused
     * for the next batch, so read it before returning. Completes on any thread; a refusal of a topic (too many topics) surfaces from {@link Numbers#next}.
     */
    CompletionStage<Numbers> reserve(List<String> topics);

    /**
     * True for a shared sequencer that stores each event with its number in the same atomic step
     * (and dedupes its idempotency key there): then the publisher asks {@link #reserve(List, List)},
     * does not dedupe itself, and learns from {@link Numbers#created} whether the key was seen.
     */
    default boolean storesEvents() {
        return false;
    }

    /**
     * {@link #reserve(List)} for a sequencer that {@link #storesEvents}: {@code publishes} are the
     * batch's publishes in order (with their data, as the sequencer stores them), {@code topics}
     * their topics. Numbers not taken cannot be handed out again: there are none, each was stored.
     */
    default CompletionStage<Numbers> reserve(List<String> topics, List<? extends Publish> publishes) {
        return reserve(topics);
    }

    /** One publish as a sequencer that stores events sees it; {@code key} is its idempotency key or null. */
    interface Publish {
        String topic();

        String key();

        byte[] data();
    }

    /**
     * The numbers of one batch. Writer thread only, in the batch's order. A number must not be
     * lost as a hole: one the batch does not take (a duplicate, a refused append) is handed out
     * again. The local counter simply has not counted it; a shared sequencer that cannot take
     * numbers back stores each event with its number in the same step (then it also dedupes, and
     * the publisher may acknowledge as soon as it answered).
     */
    interface Numbers {

        /** The next sequence of {@code topic}; throws {@link TopicLimitException} for a topic refused. */
        long next(String topic);

        /**
         * The append of {@code seq}, the last number {@link #next} gave {@code topic}, failed: hand
         * it out again, so a refused publish burns no number.
         */
        void release(String topic, long seq);

        /** False when the last {@link #next} answered an idempotency key seen before (storing sequencers). */
        default boolean created() {
            return true;
        }

        /** The append time the sequencer gave the last {@link #next}, or -1: the publisher's clock. */
        default long timestampMillis() {
            return -1;
        }

        /** The epoch of the last {@link #next} (a sequencer with an epoch per topic), or null: ask the history. */
        default String epoch() {
            return null;
        }
    }
}
