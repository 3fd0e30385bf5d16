package io.pushd.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The free-space logic with a fake disk: what it reserves, when it refuses, when it recovers. */
class StorageGuardTest {

    static final long MIB = 1 << 20;
    static final long MIN_FREE = 4 * MIB;
    static final File LOG = new File("log/20270115-08F.cq4");

    final AtomicLong usable = new AtomicLong(100 * MIB);
    final AtomicLong nanos = new AtomicLong();
    final AtomicLong probes = new AtomicLong();
    final FakeDisk disk = new FakeDisk();

    /** Allocation takes blocks from {@link #usable}; fails with NO_SPACE when there are too few. */
    final class FakeDisk implements StorageGuard.Allocator {
        final List<long[]> allocated = new ArrayList<>();
        boolean supported = true;

        @Override
        public long open(File file) {
            return supported ? 7 : -1;
        }

        @Override
        public Result allocate(long handle, long offset, long length) {
            if (!supported) {
                return Result.UNSUPPORTED;
            }
            if (length > usable.get()) {
                return Result.NO_SPACE;
            }
            usable.addAndGet(-length);
            allocated.add(new long[] {offset, length});
            return Result.OK;
        }

        @Override
        public void close(long handle) {
        }
    }

    StorageGuard guard() {
        return new StorageGuard(Path.of("data"), MIN_FREE, () -> {
            probes.incrementAndGet();
            return usable.get();
        }, disk, nanos::get);
    }

    /** The first append of a file (checked for room), then positions the guard at {@code end} of it. */
    static void startFile(StorageGuard g, long end) {
        assertThat(g.tryReserve(5_000, true)).isTrue();
        g.appended(LOG, end);
    }

    @Test
    void reservesBlocksAheadOfTheWritePositionInSteps() {
        StorageGuard g = guard();
        startFile(g, 100_000);

        assertThat(g.tryReserve(5_000, false)).isTrue();
        assertThat(disk.allocated).hasSize(1);
        long[] first = disk.allocated.get(0);
        assertThat(first[0]).as("reserved from the end of the last excerpt").isEqualTo(100_000);
        assertThat(first[1]).as("the excerpt, the index slack and a step ahead")
                .isEqualTo(5_000 + StorageGuard.INDEX_SLACK + StorageGuard.STEP);

        // The next excerpts of 5 KB fall inside the reservation until a step (1 MiB) is used up.
        long end = 100_000;
        int withoutFallocate = 0;
        while (disk.allocated.size() == 1) {
            end += 5_000;
            g.appended(LOG, end);
            assertThat(g.tryReserve(5_000, false)).isTrue();
            withoutFallocate++;
        }
        assertThat(withoutFallocate).isEqualTo((int) (StorageGuard.STEP / 5_000) + 1);
        assertThat(disk.allocated).hasSize(2);
        assertThat(disk.allocated.get(1)[0]).as("continues where the last reservation ended")
                .isEqualTo(first[0] + first[1]);
    }

    @Test
    void refusesRatherThanLeaveLessThanMinFreeBytesAndSaysSoInItsState() {
        StorageGuard g = guard();
        startFile(g, 0);
        usable.set(MIN_FREE + StorageGuard.INDEX_SLACK + 10_000); // room for this excerpt, not for a step ahead
        nanos.addAndGet(StorageGuard.PROBE_EVERY_NANOS);

        assertThat(g.tryReserve(5_000, false)).as("exactly what is needed still fits").isTrue();
        assertThat(disk.allocated.get(0)[1]).isEqualTo(5_000 + StorageGuard.INDEX_SLACK);
        g.appended(LOG, 5_000);
        assertThat(g.tryReserve(9_000, false)).as("beyond the watermark").isFalse();
        assertThat(g.writable()).isFalse();
        assertThat(disk.allocated).as("a refusal reserves nothing").hasSize(1);
    }

    @Test
    void aFullDiskIsNoticedWhenFallocateFailsEvenIfTheCachedReadingLooksFine() {
        StorageGuard g = guard();
        startFile(g, 0);
        long stale = usable.get();
        usable.set(0); // someone else filled the disk; the cached reading still says 100 MiB
        assertThat(g.tryReserve(5_000, false)).isFalse();
        assertThat(g.writable()).isFalse();
        usable.set(stale);
        assertThat(g.tryReserve(5_000, false)).as("re-read at once while refusing").isTrue();
        assertThat(g.writable()).isTrue();
    }

    @Test
    void resumesByItselfOnceSpaceIsFreed() {
        StorageGuard g = guard();
        startFile(g, 0);
        usable.set(MIN_FREE - 1);
        nanos.addAndGet(StorageGuard.PROBE_EVERY_NANOS);
        for (int i = 0; i < 3; i++) {
            assertThat(g.tryReserve(5_000, false)).isFalse();
        }
        usable.set(50 * MIB);
        assertThat(g.tryReserve(5_000, false)).as("the disk is re-read while full, not after the cache ages")
                .isTrue();
        assertThat(g.writable()).isTrue();
    }

    @Test
    void readsTheDiskAtMostOncePerIntervalWhileWritable() {
        StorageGuard g = guard();
        startFile(g, 0);
        long before = probes.get();
        for (int i = 0; i < 1_000; i++) {
            assertThat(g.tryReserve(100, false)).isTrue();
        }
        assertThat(probes.get() - before).isLessThanOrEqualTo(1);
        nanos.addAndGet(StorageGuard.PROBE_EVERY_NANOS);
        g.tryReserve(100, false);
        assertThat(probes.get() - before).isLessThanOrEqualTo(2);
    }

    @Test
    void aNewLogFileNeedsRoomForItsHeaderAndIndexesCheckedWithAFreshReading() {
        StorageGuard g = guard();
        startFile(g, 0);
        usable.set(MIN_FREE + StorageGuard.NEW_FILE_BYTES / 2); // fine for the current file, not for a new one
        assertThat(g.tryReserve(5_000, true)).isFalse();
        usable.set(MIN_FREE + StorageGuard.NEW_FILE_BYTES + StorageGuard.INDEX_SLACK + 5_000);
        assertThat(g.tryReserve(5_000, true)).isTrue();
    }

    @Test
    void withoutFallocateTheWatermarkAloneDecides() {
        disk.supported = false;
        StorageGuard g = guard();
        startFile(g, 0);
        assertThat(g.tryReserve(5_000, false)).isTrue();
        usable.set(MIN_FREE + 1_000);
        nanos.addAndGet(StorageGuard.PROBE_EVERY_NANOS);
        assertThat(g.tryReserve(5_000, false)).isFalse();
        assertThat(disk.allocated).isEmpty();
    }

    @Test
    void aFaultMakesItUnwritableUntilTheNextAppendThatFits() {
        StorageGuard g = guard();
        startFile(g, 0);
        g.faulted(new InternalError("a fault occurred in a recent unsafe memory access operation"));
        assertThat(g.writable()).isFalse();
        assertThat(g.tryReserve(5_000, false)).isTrue();
        assertThat(g.writable()).isTrue();
        assertThat(disk.allocated.get(0)[0]).as("reserves again from the last excerpt's end").isZero();
    }
}
