package io.pushd.server.history;

import java.io.Closeable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The history of every topic: what the publisher appends to, and what subscriptions and the HTTP
 * API read. Everything that names an event ({@code <epoch>-<seq>}) asks its epoch here, per topic.
 *
 * <p>The promises a caller relies on, whatever assigns the sequences:
 * <ul>
 *   <li><b>Dense per topic.</b> A topic's sequences start at 1 in its epoch and never repeat;
 *       {@link #range} and {@link #read} never show a hole (see {@link TopicRange}). A history whose
 *       events can arrive out of order (a shared sequencer whose broadcasts may be lost) holds back
 *       what follows a hole until it has backfilled it.</li>
 *   <li><b>An epoch names one history.</b> When a topic's history is lost (a new data directory,
 *       history a shared store no longer has), its epoch changes, so no {@code <epoch>-<seq>} ever
 *       names two events. The local store has one epoch for every topic; a shared one may keep
 *       one per topic.</li>
 *   <li><b>Visible means durable.</b> An event is visible to {@link #range} and {@link #read} only
 *       once it is as durable as an acknowledgement promises (with fsync: after {@link #sync}).</li>
 * </ul>
 *
 * <p>Threads: {@link #append} and {@link #sync} from the publisher's writer, one batch at a time
 * (its writer thread, or a publishing event loop that found it idle: see {@code Publisher});
 * everything else from any thread. Implementations: {@code store.ChronicleEventStore} (one node,
 * one Chronicle Queue) and {@code cluster.RedisHistory} (Redis, with a local replay cache).
 */
public interface EventHistory extends Closeable {

    /**
     * What {@link #read} and {@link #readData} return when the events asked for are kept, but not
     * at hand: reading them would wait for another machine. The caller asks {@link #fetch}, which
     * does not block, and goes on with what it brings. The local store never returns it.
     */
    int NOT_AT_HAND = -1;

    /**
     * What {@link #read} and {@link #readData} return when the topic's epoch is no longer the one
     * the caller named: its history was replaced (a shared store lost it) after the caller looked
     * at the epoch. Nothing was read; the caller asks {@link #epoch} again (a subscription says
     * {@code reset unknown_epoch}). Checked in the same step as the read, so an event is never
     * handed to a caller that labels it with another history's epoch.
     */
    int EPOCH_CHANGED = -2;

    /**
     * Completes (on any thread) once {@link #epoch}, {@link #range} and {@link #read} of
     * {@code topic} answer without waiting for another machine: a shared history loads what it
     * knows of a topic on first use. Done at once for the local store and for topics at hand; a
     * caller on an event loop asks this first and goes on when it completes. Fails when the history
     * cannot be reached.
     */
    default CompletionStage<Void> prepare(String topic) {
        return CompletableFuture.completedFuture(null);
    }

    /**
     * Completes (on any thread) once {@link #epoch} and {@link #range} of {@code topic} reach
     * {@code epoch}-{@code seq}, or once the history has confirmed it holds no such event. A node of
     * a shared history may not have applied what another node already delivered (a later event, or
     * a new epoch): a client resuming from such an ID is behind no one, and must not be told its ID
     * is from the future or of an unknown epoch. Done at once for the local store (its range is the
     * truth). Fails when the history cannot be reached.
     */
    default CompletionStage<Void> catchUp(String topic, String epoch, long seq) {
        return CompletableFuture.completedFuture(null);
    }

    /** The epoch of {@code topic}'s history: the first part of every event ID of the topic. */
    String epoch(String topic);

    /**
     * Appends one event whose sequence was assigned by the {@link Sequencer}: greater than the
     * topic's head (a history that backfills may take it past a hole). Throws a
     * {@code RuntimeException} when it was not stored; then nothing is visible and {@code seq} may
     * be handed out again (the local store: {@code StorageFullException} for want of disk).
     */
    void append(String topic, long seq, long timestampMillis, String idempotencyKey, byte[] data);

    /**
     * Ends a batch of appends: with fsync on, forces them to stable storage (power-loss safe) and
     * only then makes them visible to {@link #range} and {@link #read}, so no client ever sees an
     * event a power loss could take back. Without fsync, appends are visible at once.
     */
    void sync();

    /** Head and oldest kept sequence of a topic; {@link TopicRange#EMPTY} for a topic never written. */
    TopicRange range(String topic);

    /** The sequence an idempotency key was given within the dedupe window, or -1. */
    long findByIdempotencyKey(String topic, String key);

    /**
     * Reads up to {@code max} kept events of {@code topic}'s epoch {@code epoch} with a sequence
     * greater than {@code afterSeq}, in order and without a hole, and returns how many it passed to
     * the visitor (possibly fewer than are kept: the caller reads again after the last one),
     * {@link #NOT_AT_HAND} when they must be {@link #fetch fetched} first, or
     * {@link #EPOCH_CHANGED} when the topic's epoch is no longer {@code epoch}. Never waits for
     * the network, so it may run on an event loop.
     */
    int read(String topic, String epoch, long afterSeq, int max, EventVisitor visitor);

    /**
     * {@link #read} of whatever epoch the topic has now, for a caller that labels no event with it
     * (tests, counts): anything that writes an ID names the epoch it writes.
     */
    default int read(String topic, long afterSeq, int max, EventVisitor visitor) {
        return read(topic, epoch(topic), afterSeq, max, visitor);
    }

    /**
     * Brings up to {@code max} kept events of {@code topic} after {@code afterSeq}, in order,
     * from wherever they are kept, without blocking the caller; the stage completes on any thread
     * (the caller moves to its own before it writes them). Possibly fewer events than asked, and
     * possibly after a hole retention made (the caller says {@code expired}, as after a read).
     * {@link Fetched#epoch} is the epoch they belong to: when it is not the caller's, the topic's
     * history was replaced meanwhile and the caller asks {@link #epoch} again. Fails when the
     * history cannot be reached. The default reads at once: the local store's reads are local disk.
     */
    default CompletionStage<Fetched> fetch(String topic, long afterSeq, int max) {
        try {
            String epoch = epoch(topic);
            Fetched.Builder b = new Fetched.Builder(Math.min(max, 256));
            int n = read(topic, epoch, afterSeq, max, b);
            if (n == EPOCH_CHANGED) {
                return CompletableFuture.completedFuture(b.build(epoch(topic), 0)); // the caller sees the new epoch
            }
            return CompletableFuture.completedFuture(n == NOT_AT_HAND ? b.build(epoch, 0) : b.build(epoch, max));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Events a {@link #fetch} brought: copies, usable on any thread, in order. */
    record Fetched(String epoch, long[] seqs, long[] timestamps, byte[][] data) {

        public int size() {
            return seqs.length;
        }

        public void forEach(EventVisitor visitor) {
            for (int i = 0; i < seqs.length; i++) {
                visitor.accept(seqs[i], timestamps[i], data[i]);
            }
        }

        /** Collects events as a visitor. */
        public static final class Builder implements EventVisitor {
            private long[] seqs;
            private long[] timestamps;
            private byte[][] data;
            private int n;

            public Builder(int expected) {
                int size = Math.max(1, expected);
                seqs = new long[size];
                timestamps = new long[size];
                data = new byte[size][];
            }

            @Override
            public void accept(long seq, long timestampMillis, byte[] bytes) {
                if (n == seqs.length) {
                    seqs = java.util.Arrays.copyOf(seqs, n * 2);
                    timestamps = java.util.Arrays.copyOf(timestamps, n * 2);
                    data = java.util.Arrays.copyOf(data, n * 2);
                }
                seqs[n] = seq;
                timestamps[n] = timestampMillis;
                data[n] = bytes;
                n++;
            }

            public int size() {
                return n;
            }

            /** The events collected, at most {@code max} of them, as events of {@code epoch}. */
            public Fetched build(String epoch, int max) {
                int k = Math.min(n, max);
                return new Fetched(epoch, java.util.Arrays.copyOf(seqs, k), java.util.Arrays.copyOf(timestamps, k),
                        java.util.Arrays.copyOf(data, k));
            }
        }
    }

    /**
     * Like {@link #read}, but hands each event's data as an {@link EventData} view that can be
     * copied straight into an outbound buffer: replay then costs no {@code byte[]} per event. A
     * history kept elsewhere need not override it. Returns what {@link #read} does.
     */
    default int readData(String topic, String epoch, long afterSeq, int max, EventDataVisitor visitor) {
        return read(topic, epoch, afterSeq, max, (seq, ts, data) -> visitor.accept(seq, ts, EventData.of(data)));
    }

    /**
     * What {@code /readyz} says of the history: {@code writable}, else why appends are refused
     * ({@code full}: the local store's disk).
     */
    default String writeState() {
        return writable() ? "writable" : "full";
    }

    /** False while appends are refused (the local store: for want of disk space); reads still work. */
    default boolean writable() {
        return true;
    }

    /**
     * True when the history fans its events out itself, in order and after backfilling any hole (a
     * shared history receives the events of other nodes too); then the publisher does not.
     */
    default boolean fansOutItself() {
        return false;
    }

    /** Receives events read from the history; {@code data} is the compact JSON that was published. */
    @FunctionalInterface
    interface EventVisitor {
        void accept(long seq, long timestampMillis, byte[] data);
    }

    /** One event's data, valid only during the visitor call that received it. */
    interface EventData {
        /** Its length in bytes. */
        int length();

        /** Appends the bytes to {@code out}. */
        void copyTo(io.netty.buffer.ByteBuf out);

        /** A copy of the bytes. */
        byte[] toBytes();

        static EventData of(byte[] data) {
            return new EventData() {
                @Override
                public int length() {
                    return data.length;
                }

                @Override
                public void copyTo(io.netty.buffer.ByteBuf out) {
                    out.writeBytes(data);
                }

                @Override
                public byte[] toBytes() {
                    return data;
                }
            };
        }
    }

    /** Receives events from {@link #readData}. */
    @FunctionalInterface
    interface EventDataVisitor {
        void accept(long seq, long timestampMillis, EventData data);
    }
}
