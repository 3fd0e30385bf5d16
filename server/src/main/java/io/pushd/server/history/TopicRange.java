package io.pushd.server.history;

import io.pushd.protocol.EventId;

/**
 * What a topic's history holds, as readers rely on it (in the topic's {@link EventHistory#epoch
 * epoch}): {@code head} is the newest sequence (0 = never written), {@code oldest} the first one
 * still kept (0 = none kept), and when {@code oldest > 0} every event {@code oldest..head} is
 * readable, with no hole; events before {@code oldest} are gone. Readers treat {@code head} as
 * "everything up to here exists": a history holding events past a hole it has not backfilled yet
 * reports the last sequence before the hole, or a reader would skip the missing events for good.
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
