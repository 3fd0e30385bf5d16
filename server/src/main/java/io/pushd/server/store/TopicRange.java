package io.pushd.server.store;

import io.pushd.protocol.EventId;

/**
 * What a topic holds: {@code head} is the last sequence ever given (0 = none), {@code oldest} the
 * first one still kept (0 = none kept). Events {@code oldest..head} are all readable.
 */
public record TopicRange(long head, long oldest) {
    public static final TopicRange EMPTY = new TopicRange(0, 0);

    public boolean hasKeptEvents() {
        return oldest > 0;
    }

    /** The head as a wire ID, or null for a topic never written. */
    public EventId headId(String epoch) {
        return head == 0 ? null : new EventId(epoch, head);
    }

    /** The oldest kept event as a wire ID, or null when none is kept. */
    public EventId oldestId(String epoch) {
        return oldest == 0 ? null : new EventId(epoch, oldest);
    }
}
