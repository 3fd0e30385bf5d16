package io.pushd.client;

import io.pushd.protocol.EventId;

/**
 * The resume position of one followed topic: the last ID delivered (or the head the server
 * confirmed). Written on the client's event loop only; {@link #last()} may be read anywhere.
 */
final class TopicCursor {

    enum Verdict {
        /** Next in sequence: deliver. */
        ACCEPT,
        /** Newer but not the next one: deliver (the server promises no gap; this is only counted). */
        ACCEPT_AFTER_GAP,
        /** Not newer than what was delivered: drop. */
        DUPLICATE,
        /** From another history without a reset first: drop. */
        FOREIGN_EPOCH
    }

    final String topic;
    private volatile EventId last;
    /** Whether {@code subscribed} arrived on the current connection. */
    boolean confirmed;

    TopicCursor(String topic, EventId start) {
        this.topic = topic;
        this.last = start;
    }

    EventId last() {
        return last;
    }

    /** A new connection starts: its {@code subscribed} is still to come. */
    void newConnection() {
        confirmed = false;
    }

    /**
     * A live-only subscription starts at the head the server confirmed, so the next reconnect
     * resumes from there and misses nothing that was published while it was away.
     */
    void subscribed(EventId head, String epoch) {
        if (last == null) {
            if (head != null) {
                last = head;
            } else if (epoch != null) {
                last = new EventId(epoch, 0); // an empty topic: everything from its first event on
            }
        }
    }

    Verdict offer(EventId id) {
        EventId l = last;
        if (l == null) {
            last = id;
            return Verdict.ACCEPT;
        }
        if (!l.epoch().equals(id.epoch())) {
            return Verdict.FOREIGN_EPOCH; // only a reset may move a topic to another history
        }
        if (id.seq() <= l.seq()) {
            return Verdict.DUPLICATE;
        }
        last = id;
        return id.seq() == l.seq() + 1 ? Verdict.ACCEPT : Verdict.ACCEPT_AFTER_GAP;
    }

    /** The server replaced the replay: continue after {@code id}, whatever its epoch. */
    void reset(EventId id) {
        last = id;
    }
}
