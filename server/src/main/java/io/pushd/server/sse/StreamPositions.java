package io.pushd.server.sse;

import io.netty.buffer.ByteBuf;
import io.pushd.protocol.EventId;
import io.pushd.server.topic.EventAppender;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Where each topic of an SSE stream is, in the stream's topic order: what its {@code id:} line
 * says. One topic: the event ID; several: the cursor {@code T1@E-5,T2@E-0} ({@link SseCursor}).
 * The cursor is kept as bytes ({@code T@E-} per topic and the sequence), so a live event moves
 * one sequence and its {@code id:} line is copied from an array, with no String, map entry or
 * {@code EventId} per event and subscriber. A topic whose position is not known yet (live only,
 * before its {@code subscribed} gives the head) is left out of the cursor. Event loop only.
 */
final class StreamPositions {

    private final Map<String, Integer> index = new HashMap<>();
    private final String[] topics;
    private final String[] epochs;
    /** {@code T@E-} of each topic with a known position; null while it is not known. */
    private final byte[][] heads;
    private final long[] seqs;
    /** What the cursor takes at most at its positions' epochs: each known topic's head, 19 digits and a comma. */
    private int cursorBound;
    /** The cursor's bytes while {@link #cursorValid}, {@link #cursorLength} of them. */
    private byte[] cursor = new byte[64];
    private int cursorLength;
    private boolean cursorValid;

    /** {@code topics} in the stream's order, each at its position (null: not known yet). */
    StreamPositions(List<String> topics, List<EventId> positions) {
        int n = topics.size();
        this.topics = topics.toArray(new String[0]);
        this.epochs = new String[n];
        this.heads = new byte[n][];
        this.seqs = new long[n];
        for (int i = 0; i < n; i++) {
            index.put(this.topics[i], i);
            set(this.topics[i], positions.get(i));
        }
    }

    /** True when {@code topic} of the stream has a known position. */
    boolean known(String topic) {
        Integer i = index.get(topic);
        return i != null && heads[i] != null;
    }

    /** Puts {@code topic} at {@code at} (a {@code subscribed}'s head, a {@code reset}'s ID); null: not known. */
    void set(String topic, EventId at) {
        int i = index.get(topic);
        if (at == null) {
            epochs[i] = null;
            heads[i] = null;
        } else {
            epochs[i] = at.epoch();
            heads[i] = (topic + '@' + at.epoch() + '-').getBytes(StandardCharsets.US_ASCII);
            seqs[i] = at.seq();
        }
        cursorBound = 0;
        for (byte[] head : heads) {
            cursorBound += head == null ? 0 : head.length + 19 + 1;
        }
        cursorValid = false;
    }

    /** Moves {@code topic} to event {@code seq} of its epoch (an event of it went out). */
    void advance(String topic, long seq) {
        int i = index.get(topic);
        if (heads[i] == null) {
            throw new IllegalStateException("an event of " + topic + " before its position was known");
        }
        seqs[i] = seq;
        cursorValid = false;
    }

    /** The {@code id:} line's value: the only topic's event ID, or the cursor. */
    String text() {
        if (topics.length == 1) {
            return epochs[0] == null ? "" : epochs[0] + '-' + seqs[0];
        }
        return new String(cursor(), 0, cursorLength, StandardCharsets.US_ASCII);
    }

    /** At least {@link #cursorLength} at any sequences, without building the cursor (sizes a buffer). */
    int cursorBound() {
        return cursorBound;
    }

    /** The cursor's length in bytes (several topics). */
    int cursorLength() {
        cursor();
        return cursorLength;
    }

    /** Writes the cursor's bytes (several topics). */
    void writeCursor(ByteBuf out) {
        out.writeBytes(cursor(), 0, cursorLength);
    }

    private byte[] cursor() {
        if (cursorValid) {
            return cursor;
        }
        int length = 0;
        for (int i = 0; i < topics.length; i++) {
            if (heads[i] != null) {
                length += (length > 0 ? 1 : 0) + heads[i].length + EventAppender.digits(seqs[i]);
            }
        }
        if (cursor.length < length) {
            cursor = new byte[Math.max(length, cursor.length * 2)];
        }
        int at = 0;
        for (int i = 0; i < topics.length; i++) {
            if (heads[i] == null) {
                continue;
            }
            if (at > 0) {
                cursor[at++] = ',';
            }
            System.arraycopy(heads[i], 0, cursor, at, heads[i].length);
            at += heads[i].length;
            long v = seqs[i];
            int digits = EventAppender.digits(v);
            for (int d = at + digits - 1; d >= at; d--) {
                cursor[d] = (byte) ('0' + v % 10);
                v /= 10;
            }
            at += digits;
        }
        cursorLength = at;
        cursorValid = true;
        return cursor;
    }
}
