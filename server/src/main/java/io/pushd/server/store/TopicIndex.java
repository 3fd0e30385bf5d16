package io.pushd.server.store;

import java.util.Arrays;

/**
 * Where each kept event of one topic sits in the shared log: parallel arrays of sequence,
 * position and timestamp, oldest first. Keeps the head after every entry is dropped so the
 * sequence never goes back. Guarded by its own monitor: the writer adds, readers look up.
 */
final class TopicIndex {

    private long[] seqs = new long[4];
    private long[] positions = new long[4];
    private int start;
    private int end;
    private long head;

    synchronized void add(long seq, long position) {
        if (seq <= head) {
            throw new IllegalStateException("sequence " + seq + " is not after head " + head);
        }
        if (end == seqs.length) {
            grow();
        }
        seqs[end] = seq;
        positions[end] = position;
        end++;
        head = seq;
    }

    /** Raises the head without an entry (a head recovered from a checkpoint). */
    synchronized void raiseHead(long seq) {
        head = Math.max(head, seq);
    }

    synchronized long head() {
        return head;
    }

    synchronized int size() {
        return end - start;
    }

    synchronized TopicRange range() {
        return new TopicRange(head, end > start ? seqs[start] : 0);
    }

    /** Position of the oldest kept entry, or Long.MAX_VALUE when none is kept. */
    synchronized long oldestPosition() {
        return end > start ? positions[start] : Long.MAX_VALUE;
    }

    /** Keeps at most {@code max} newest entries. */
    synchronized void trimToCount(long max) {
        if (end - start > max) {
            start = (int) (end - max);
            compactIfSparse();
        }
    }

    /** Drops every entry whose position is below {@code position}. */
    synchronized void trimBelowPosition(long position) {
        while (start < end && positions[start] < position) {
            start++;
        }
        compactIfSparse();
    }

    /**
     * Copies up to {@code max} positions of events with sequence greater than {@code afterSeq}
     * into {@code out} (with their sequences into {@code outSeqs}); returns how many.
     */
    synchronized int positionsAfter(long afterSeq, int max, long[] outSeqs, long[] out) {
        if (afterSeq == Long.MAX_VALUE) {
            return 0; // nothing can follow, and afterSeq + 1 would wrap to the smallest long
        }
        int i = Arrays.binarySearch(seqs, start, end, afterSeq + 1);
        if (i < 0) {
            i = -i - 1;
        }
        int n = Math.min(max, end - i);
        if (n <= 0) {
            return 0;
        }
        System.arraycopy(seqs, i, outSeqs, 0, n);
        System.arraycopy(positions, i, out, 0, n);
        return n;
    }

    private void grow() {
        int live = end - start;
        int cap = live * 2 < seqs.length ? seqs.length : seqs.length * 2;
        long[] s = new long[cap];
        long[] p = new long[cap];
        System.arraycopy(seqs, start, s, 0, live);
        System.arraycopy(positions, start, p, 0, live);
        seqs = s;
        positions = p;
        start = 0;
        end = live;
    }

    private void compactIfSparse() {
        if (start == end) {
            start = end = 0;
            if (seqs.length > 64) {
                seqs = new long[4];
                positions = new long[4];
            }
        } else if (start > seqs.length / 2 && seqs.length > 64) {
            grow();
        }
    }
}
