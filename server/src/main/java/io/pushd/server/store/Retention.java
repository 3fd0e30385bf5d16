package io.pushd.server.store;

import java.io.File;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Collection;
import java.util.concurrent.locks.Lock;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes whole log files (hourly cycles) that are past {@code store.retentionAge} or that no
 * topic's index refers to any more (every event in them dropped by {@code store.retentionCount}).
 * The cycle the appender writes is never deleted. The publisher's writer only.
 */
final class Retention {

    private static final Logger log = LoggerFactory.getLogger(Retention.class);

    private final SingleChronicleQueue queue;
    private final RollCycle rollCycle;
    private final Path logDir;
    private final long retentionAgeMillis;
    private final DateTimeFormatter cycleFileFormat;

    Retention(SingleChronicleQueue queue, RollCycle rollCycle, Path logDir, long retentionAgeMillis) {
        this.queue = queue;
        this.rollCycle = rollCycle;
        this.logDir = logDir;
        this.retentionAgeMillis = retentionAgeMillis;
        this.cycleFileFormat = DateTimeFormatter.ofPattern(rollCycle.format()).withZone(ZoneOffset.UTC);
    }

    /**
     * Drops what is past retention. {@code beforeDeleting} runs first when a file is to go (the
     * heads checkpoint, so no head is ever forgotten); the deletion holds {@code fileWriteLock}.
     */
    void enforce(long nowMillis, Collection<TopicIndex> topics, Runnable beforeDeleting, Lock fileWriteLock) {
        int current = queue.cycle();
        int first = queue.firstCycle();
        if (first == Integer.MAX_VALUE || first >= current) {
            return;
        }
        int keepFrom = firstCycleToKeep(first, current, nowMillis, lowWater(topics));
        if (keepFrom == first) {
            return;
        }
        long keptPosition = rollCycle.toIndex(keepFrom, 0);
        beforeDeleting.run();
        fileWriteLock.lock();
        try {
            for (TopicIndex i : topics) {
                i.trimBelowPosition(keptPosition);
            }
            for (int c = first; c < keepFrom; c++) {
                delete(c);
            }
            queue.refreshDirectoryListing();
        } finally {
            fileWriteLock.unlock();
        }
    }

    /** Nothing below this position is still kept by count. */
    private static long lowWater(Collection<TopicIndex> topics) {
        long lowWater = Long.MAX_VALUE;
        for (TopicIndex i : topics) {
            lowWater = Math.min(lowWater, i.oldestPosition());
        }
        return lowWater;
    }

    private int firstCycleToKeep(int first, int current, long nowMillis, long lowWater) {
        long cycleMillis = rollCycle.lengthInMillis();
        int keepFrom = first;
        for (int c = first; c < current; c++) {
            long cycleEnd = (c + 1L) * cycleMillis;
            long nextCycleStart = rollCycle.toIndex(c + 1, 0);
            boolean tooOld = cycleEnd <= nowMillis - retentionAgeMillis;
            boolean unreferenced = nextCycleStart <= lowWater;
            if (!tooOld && !unreferenced) {
                break;
            }
            keepFrom = c + 1;
        }
        return keepFrom;
    }

    private void delete(int cycle) {
        long cycleMillis = rollCycle.lengthInMillis();
        File f = logDir.resolve(cycleFileFormat.format(Instant.ofEpochMilli(cycle * cycleMillis)) + ".cq4").toFile();
        if (f.exists() && !f.delete()) {
            log.warn("could not delete expired log file {}", f);
        } else {
            log.info("deleted expired log file {}", f.getName());
        }
    }
}
