package io.pushd.server.store;

import java.io.Closeable;
import java.util.Map;

/**
 * The event history of all topics. One writer appends (the caller guarantees a single thread);
 * any thread reads. Reads name a topic and a sequence number; the store maps them to positions
 * in its log. Implementations: {@link ChronicleEventStore}.
 */
public interface EventStore extends Closeable {

    /** The history this store holds; new whenever the data directory is new. */
    String epoch();

    /**
     * Appends one event. {@code seq} must be greater than the topic's head. Returns the position
     * of the event in the log. Throws {@link StorageFullException} when the disk has no room for
     * it: then nothing was stored and {@code seq} may be handed out again.
     */
    long append(String topic, long seq, long timestampMillis, String idempotencyKey, byte[] data);

    /**
     * Ends a batch of appends: with fsync on, forces them to stable storage (power-loss safe) and
     * only then makes them visible to {@link #range} and {@link #read}, so no client ever sees an
     * event a power loss could take back. Without fsync, appends are visible at once.
     */
    void sync();

    /** Head and oldest kept sequence of a topic; {@link TopicRange#EMPTY} for a topic never written. */
    TopicRange range(String topic);

    /** The last sequence number of every topic ever written in this epoch, for the sequencer. */
    Map<String, Long> heads();

    /** The sequence an idempotency key was given within the dedupe window, or -1. */
    long findByIdempotencyKey(String topic, String key);

    /**
     * Reads up to {@code max} kept events of {@code topic} with a sequence greater than
     * {@code afterSeq}, in order, and returns how many it passed to the visitor.
     */
    int read(String topic, long afterSeq, int max, EventVisitor visitor);

    /** Drops events past retention and deletes log files nothing refers to any more. */
    void enforceRetention();

    /** Bytes of log files on disk. */
    long diskBytes();

    /** False while appends are refused for want of disk space (reads still work). */
    default boolean writable() {
        return true;
    }

    /** Receives events read from the store; {@code data} is the compact JSON that was published. */
    @FunctionalInterface
    interface EventVisitor {
        void accept(long seq, long timestampMillis, byte[] data);
    }
}
