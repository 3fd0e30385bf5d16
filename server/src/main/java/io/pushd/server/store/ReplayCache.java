package io.pushd.server.store;

import io.pushd.server.history.EventHistory.EventDataVisitor;
import io.pushd.server.history.TopicRange;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.stream.Stream;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cluster node's local copy of the events it applied, in one Chronicle Queue of its own (the
 * store's {@link LogAppender}, {@link LogReader}, {@link StorageGuard} and {@link Retention}), so
 * that replays of the topics it follows cost no Redis round trip per event.
 *
 * <p>Per topic it holds <b>runs</b>: events of one epoch, contiguous from the run's first to its
 * last sequence ({@link TopicIndex}, whose positions grow with the sequence). The <i>tail</i> run
 * is what the node applied (live and backfilled), extended at {@code last + 1}; an event that does
 * not follow it (after a hole this cache missed, or of another epoch) starts a new tail. The
 * <i>cold</i> run is made of pages fetched from Redis for a replay below the tail; it is extended
 * by the next page and replaced by a page that does not follow it. A read is served only from a
 * run of the asked epoch that holds {@code afterSeq + 1}; anything else is {@link #NOT_HELD} and
 * the caller reads Redis. It is a cache: it may hold less than asked, never another epoch's event.
 *
 * <p>Starts empty: the files of the last run are deleted at start. Their index would have to be
 * rebuilt by scanning the whole queue (what makes a single node's start slow with a long history)
 * and every topic's range checked against Redis, which may have a new epoch or a trimmed stream
 * by now; the node fetches what it lacks from Redis anyway.
 *
 * <p>A full disk or a failing write only stops caching (logged once per change of state, never a
 * refusal of anything): the events are still served from Redis. Threads: {@link #append},
 * {@link #appendFetched}, {@link #drop} and {@link #enforceRetention} from one thread (the
 * cluster's applier); {@link #read} and {@link #held} from any thread.
 */
public final class ReplayCache implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ReplayCache.class);
    /** What {@link #read} returns when the cache does not hold the event after {@code afterSeq}. */
    public static final int NOT_HELD = -1;
    private static final RollCycle ROLL_CYCLE = RollCycles.FAST_HOURLY;

    /** Events of one epoch, contiguous; the index's head is the last, its oldest the first (0 = none left). */
    private record Run(String epoch, TopicIndex index) {
        boolean holds(String e, long seq) {
            TopicRange r = index.range();
            return epoch.equals(e) && r.oldest() > 0 && seq >= r.oldest() && seq <= r.head();
        }

        long last() {
            return index.head();
        }
    }

    private static final class Runs {
        volatile Run tail;
        volatile Run cold;
    }

    private final Path dir;
    private final long retentionCount;
    private final TimeProvider clock;
    private final SingleChronicleQueue queue;
    private final StorageGuard storage;
    private final LogAppender appender;
    private final LogReader reader;
    private final Retention retention;
    private final ReentrantReadWriteLock fileLock = new ReentrantReadWriteLock();
    private final Map<String, Runs> topics = new ConcurrentHashMap<>();
    private volatile boolean failing;
    private volatile boolean closed;

    private ReplayCache(Path dir, Duration retentionAge, long retentionCount, long minFreeBytes, TimeProvider clock) {
        this.dir = dir;
        this.retentionCount = retentionCount;
        this.clock = clock;
        wipe(dir);
        this.queue = SingleChronicleQueueBuilder.binary(dir.toFile()).rollCycle(ROLL_CYCLE).timeProvider(clock).build();
        try {
            this.storage = StorageGuard.forDirectory(dir, minFreeBytes).consequences(
                    "the replay cache stops caching (replays read Redis) until space is freed",
                    "the replay cache caches again");
            storage.reserveWholeFile(dir.resolve("metadata.cq4t")); // written in place, e.g. at each roll
            this.appender = new LogAppender(queue, storage);
            this.reader = new LogReader(queue, fileLock.readLock());
            this.retention = new Retention(queue, ROLL_CYCLE, dir, retentionAge.toMillis());
        } catch (RuntimeException e) {
            queue.close();
            throw e;
        }
    }

    /**
     * Opens the cache in {@code dir} (emptied), with the store's retention and free-space watermark;
     * null when it cannot (an unwritable or odd directory): the node then reads Redis for what its
     * in-memory tail does not hold, and says so once.
     */
    public static ReplayCache open(Path dir, Duration retentionAge, long retentionCount, long minFreeBytes,
                                   TimeProvider clock) {
        try {
            return new ReplayCache(dir, retentionAge, retentionCount, minFreeBytes, clock);
        } catch (RuntimeException | LinkageError e) {
            log.warn("cluster: no local replay cache in {} ({}); replays beyond the in-memory tail read Redis", dir,
                    e.toString());
            return null;
        }
    }

    private static void wipe(Path dir) {
        try {
            Files.createDirectories(dir);
            try (Stream<Path> old = Files.list(dir)) {
                for (Path p : (Iterable<Path>) old::iterator) {
                    String name = p.getFileName().toString();
                    if (name.endsWith(".cq4") || name.endsWith(".cq4t")) {
                        Files.delete(p);
                    }
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot empty the replay cache " + dir, e);
        }
    }

    /**
     * The event the node applied: extends the topic's tail, or starts a new one. False when it was
     * not cached (disk full, a write failed): the caller serves it from elsewhere. Applier thread.
     */
    public boolean append(String topic, String epoch, long seq, long timestampMillis, byte[] data) {
        if (closed) {
            return false;
        }
        Runs runs = topics.computeIfAbsent(topic, t -> new Runs());
        Run tail = runs.tail;
        if (tail != null && tail.epoch().equals(epoch) && seq <= tail.last()) {
            return true; // held already (a backfill overlapping what was applied)
        }
        boolean fresh = tail == null || !tail.epoch().equals(epoch) || seq != tail.last() + 1;
        if (fresh) {
            tail = new Run(epoch, new TopicIndex());
        }
        if (!write(tail, topic, epoch, seq, timestampMillis, data)) {
            return false;
        }
        if (fresh) {
            runs.tail = tail; // visible once it holds its first event
        }
        return true;
    }

    /**
     * Events fetched from Redis for a replay, in order: those the tail does not hold extend the cold
     * run (or the tail, when they follow it), or start a new cold run. Applier thread.
     */
    public void appendFetched(String topic, String epoch, long[] seqs, long[] timestamps, byte[][] data) {
        if (closed || seqs.length == 0) {
            return;
        }
        Runs runs = topics.computeIfAbsent(topic, t -> new Runs());
        for (int i = 0; i < seqs.length; i++) {
            long seq = seqs[i];
            Run tail = runs.tail;
            if (tail != null && tail.holds(epoch, seq)) {
                continue;
            }
            if (tail != null && tail.epoch().equals(epoch) && seq == tail.last() + 1) {
                if (!write(tail, topic, epoch, seq, timestamps[i], data[i])) {
                    return;
                }
                continue;
            }
            Run cold = runs.cold;
            if (cold != null && cold.epoch().equals(epoch) && seq <= cold.last() && cold.holds(epoch, seq)) {
                continue;
            }
            boolean fresh = cold == null || !cold.epoch().equals(epoch) || seq != cold.last() + 1;
            if (fresh) {
                cold = new Run(epoch, new TopicIndex());
            }
            if (!write(cold, topic, epoch, seq, timestamps[i], data[i])) {
                return;
            }
            if (fresh) {
                runs.cold = cold;
            }
        }
    }

    private boolean write(Run run, String topic, String epoch, long seq, long timestampMillis, byte[] data) {
        try {
            long bytes = appender.reserve(topic, epoch, data);
            long position = appender.writeCached(topic, epoch, seq, timestampMillis, data, bytes);
            run.index().add(seq, position);
            run.index().trimToCount(retentionCount);
            if (failing) {
                failing = false;
                log.info("cluster: the replay cache in {} caches again", dir);
            }
            return true;
        } catch (StorageFullException e) {
            return false; // the guard logs the change of state, once
        } catch (RuntimeException e) {
            if (!failing) {
                failing = true;
                log.warn("cluster: writing the replay cache in {} failed ({}); replays read Redis meanwhile", dir,
                        e.toString());
            }
            return false;
        }
    }

    /**
     * Passes events of {@code topic} in {@code epoch} after {@code afterSeq} (at most {@code max})
     * from a run that holds {@code afterSeq + 1}; returns how many, or {@link #NOT_HELD}. Any thread.
     */
    public int read(String topic, String epoch, long afterSeq, int max, EventDataVisitor visitor) {
        Runs runs = topics.get(topic);
        if (runs == null || closed || afterSeq == Long.MAX_VALUE) {
            return NOT_HELD;
        }
        for (Run r : new Run[] {runs.tail, runs.cold}) {
            if (r != null && r.holds(epoch, afterSeq + 1)) {
                int n = reader.readRun(topic, epoch, r.index(), afterSeq, max, visitor);
                if (n != NOT_HELD) {
                    return n;
                }
            }
        }
        return NOT_HELD;
    }

    /** The topic's history of another epoch replaced it: nothing of it is served again. Applier thread. */
    public void drop(String topic) {
        topics.remove(topic);
    }

    /**
     * What the tail run holds of {@code topic} in {@code epoch} (head = its last, oldest = its first),
     * or {@link TopicRange#EMPTY}. Any thread.
     */
    public TopicRange held(String topic, String epoch) {
        Runs runs = topics.get(topic);
        Run tail = runs == null ? null : runs.tail;
        return tail == null || !tail.epoch().equals(epoch) ? TopicRange.EMPTY : tail.index().range();
    }

    /** Bytes of the cache's queue files on disk (allocated, sparse). Any thread. */
    public long diskBytes() {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".cq4")).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0; // deleted by retention meanwhile
                }
            }).sum();
        } catch (IOException e) {
            return 0;
        }
    }

    /** False while the cache's disk is below the free-space watermark. */
    public boolean writable() {
        return storage.writable() && !failing;
    }

    /** Deletes hourly files past {@code store.retentionAge} or that no run refers to any more. Applier thread. */
    public void enforceRetention() {
        if (closed) {
            return;
        }
        List<TopicIndex> indexes = new ArrayList<>();
        for (Runs runs : topics.values()) {
            Run tail = runs.tail;
            Run cold = runs.cold;
            if (tail != null) {
                indexes.add(tail.index());
            }
            if (cold != null) {
                indexes.add(cold.index());
            }
        }
        retention.enforce(clock.currentTimeMillis(), indexes, () -> { }, fileLock.writeLock());
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        reader.close();
        fileLock.writeLock().lock();
        try {
            queue.close();
            storage.close();
        } finally {
            fileLock.writeLock().unlock();
        }
    }
}
