package io.pushd.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pushd.server.history.TopicRange;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class TopicIndexTest {

    /** Position of sequence {@code seq} in these tests: easy to tell apart from the sequence. */
    private static long pos(long seq) {
        return 1_000 + seq * 10;
    }

    private static TopicIndex withSeqs(long from, long to) {
        TopicIndex index = new TopicIndex();
        for (long s = from; s <= to; s++) {
            index.add(s, pos(s));
        }
        return index;
    }

    private static long[] seqsAfter(TopicIndex index, long afterSeq, int max) {
        long[] seqs = new long[max];
        long[] positions = new long[max];
        int n = index.positionsAfter(afterSeq, max, seqs, positions);
        for (int i = 0; i < n; i++) {
            assertThat(positions[i]).as("position of seq %d", seqs[i]).isEqualTo(pos(seqs[i]));
        }
        return Arrays.copyOf(seqs, n);
    }

    @Test
    void emptyIndexHasEmptyRangeAndNoPositions() {
        TopicIndex index = new TopicIndex();

        assertThat(index.range()).isEqualTo(TopicRange.EMPTY);
        assertThat(index.size()).isZero();
        assertThat(index.oldestPosition()).isEqualTo(Long.MAX_VALUE);
        assertThat(seqsAfter(index, 0, 10)).isEmpty();
    }

    @Test
    void anIndexWithNothingKeptHoldsNoArraysButKeepsItsHead() {
        TopicIndex never = new TopicIndex();
        TopicIndex drained = withSeqs(1, 100);

        drained.trimBelowPosition(Long.MAX_VALUE);

        assertThat(never.capacity()).isZero();
        assertThat(drained.capacity()).isZero();
        assertThat(drained.range()).isEqualTo(new TopicRange(100, 0));
        assertThatThrownBy(() -> drained.add(100, pos(100))).isInstanceOf(IllegalStateException.class);
        drained.add(101, pos(101));
        assertThat(seqsAfter(drained, 0, 10)).containsExactly(101);
        assertThat(drained.capacity()).isEqualTo(1);
    }

    @Test
    void growsPastItsInitialCapacityKeepingEveryEntry() {
        TopicIndex index = withSeqs(1, 1000);

        assertThat(index.size()).isEqualTo(1000);
        assertThat(index.range()).isEqualTo(new TopicRange(1000, 1));
        assertThat(seqsAfter(index, 0, 2000)).hasSize(1000).startsWith(1, 2, 3).endsWith(999, 1000);
    }

    @Test
    void sequencesMayHaveGaps() {
        TopicIndex index = new TopicIndex();
        index.add(5, pos(5));
        index.add(9, pos(9));
        index.add(20, pos(20));

        assertThat(seqsAfter(index, 0, 10)).containsExactly(5, 9, 20);
        assertThat(seqsAfter(index, 5, 10)).containsExactly(9, 20);
        assertThat(seqsAfter(index, 6, 10)).containsExactly(9, 20);
        assertThat(seqsAfter(index, 19, 10)).containsExactly(20);
        assertThat(seqsAfter(index, 20, 10)).isEmpty();
    }

    @Test
    void addingASequenceNotAfterTheHeadFails() {
        TopicIndex index = withSeqs(1, 3);

        assertThatThrownBy(() -> index.add(3, 0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> index.add(2, 0)).isInstanceOf(IllegalStateException.class);
        assertThat(index.range()).isEqualTo(new TopicRange(3, 1));
    }

    @Test
    void trimToCountKeepsTheNewestEntries() {
        TopicIndex index = withSeqs(1, 10);

        index.trimToCount(3);

        assertThat(index.size()).isEqualTo(3);
        assertThat(index.range()).isEqualTo(new TopicRange(10, 8));
        assertThat(index.oldestPosition()).isEqualTo(pos(8));
        assertThat(seqsAfter(index, 0, 10)).containsExactly(8, 9, 10);
    }

    @Test
    void trimToCountAboveTheSizeChangesNothing() {
        TopicIndex index = withSeqs(1, 5);

        index.trimToCount(5);
        index.trimToCount(100);

        assertThat(index.range()).isEqualTo(new TopicRange(5, 1));
    }

    @Test
    void repeatedTrimmingPastSixtyFourEntriesCompactsAndKeepsOrder() {
        TopicIndex index = new TopicIndex();
        for (long s = 1; s <= 10_000; s++) {
            index.add(s, pos(s));
            index.trimToCount(100); // what the store does after every append
        }

        assertThat(index.size()).isEqualTo(100);
        assertThat(index.range()).isEqualTo(new TopicRange(10_000, 9_901));
        long[] kept = seqsAfter(index, 0, 200);
        assertThat(kept).hasSize(100);
        for (int i = 0; i < kept.length; i++) {
            assertThat(kept[i]).isEqualTo(9_901 + i);
        }
        assertThat(seqsAfter(index, 9_950, 200)).hasSize(50).startsWith(9_951);
    }

    @Test
    void trimBelowPositionDropsOnlyOlderEntries() {
        TopicIndex index = withSeqs(1, 200);

        index.trimBelowPosition(pos(150));

        assertThat(index.range()).isEqualTo(new TopicRange(200, 150));
        assertThat(index.oldestPosition()).isEqualTo(pos(150));
        assertThat(seqsAfter(index, 0, 500)).hasSize(51).startsWith(150).endsWith(200);
        assertThat(seqsAfter(index, 149, 1)).containsExactly(150);
    }

    @Test
    void trimBelowPositionBetweenEntriesKeepsTheNextOne() {
        TopicIndex index = withSeqs(1, 10);

        index.trimBelowPosition(pos(4) + 1);

        assertThat(index.range().oldest()).isEqualTo(5);
    }

    @Test
    void trimmingEverythingKeepsTheHeadAndAcceptsTheNextSequence() {
        TopicIndex index = withSeqs(1, 100);

        index.trimBelowPosition(Long.MAX_VALUE);

        assertThat(index.size()).isZero();
        assertThat(index.range()).isEqualTo(new TopicRange(100, 0));
        assertThat(index.range().hasKeptEvents()).isFalse();
        assertThat(index.oldestPosition()).isEqualTo(Long.MAX_VALUE);
        assertThat(seqsAfter(index, 0, 10)).isEmpty();

        index.add(101, pos(101));

        assertThat(index.range()).isEqualTo(new TopicRange(101, 101));
        assertThat(seqsAfter(index, 0, 10)).containsExactly(101);
        assertThatThrownBy(() -> index.add(100, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void positionsAfterFindsBoundariesByBinarySearch() {
        TopicIndex index = withSeqs(1, 100);
        index.trimToCount(90); // kept: 11..100

        assertThat(seqsAfter(index, 0, 3)).containsExactly(11, 12, 13);   // before the oldest
        assertThat(seqsAfter(index, 10, 3)).containsExactly(11, 12, 13);  // just before the oldest
        assertThat(seqsAfter(index, 11, 3)).containsExactly(12, 13, 14);  // at the oldest
        assertThat(seqsAfter(index, 98, 5)).containsExactly(99, 100);     // near the head
        assertThat(seqsAfter(index, 99, 5)).containsExactly(100);         // one before the head
        assertThat(seqsAfter(index, 100, 5)).isEmpty();                    // at the head
        assertThat(seqsAfter(index, 5_000, 5)).isEmpty();                  // beyond the head
    }

    @Test
    void positionsAfterTheLargestPossibleSequenceIsEmpty() {
        TopicIndex index = withSeqs(1, 10);

        assertThat(seqsAfter(index, Long.MAX_VALUE, 5)).isEmpty();
    }

    @Test
    void positionsAfterHonoursMax() {
        TopicIndex index = withSeqs(1, 10);

        assertThat(seqsAfter(index, 2, 4)).containsExactly(3, 4, 5, 6);
        long[] none = new long[1];
        assertThat(index.positionsAfter(0, 0, none, none)).isZero();
    }

    @Test
    void raiseHeadOnlyMovesForward() {
        TopicIndex index = new TopicIndex();

        index.raiseHead(40);
        index.raiseHead(7);

        assertThat(index.head()).isEqualTo(40);
        assertThat(index.range()).isEqualTo(new TopicRange(40, 0));
        assertThatThrownBy(() -> index.add(40, 0)).isInstanceOf(IllegalStateException.class);
        index.add(41, pos(41));
        assertThat(index.range()).isEqualTo(new TopicRange(41, 41));
    }
}
