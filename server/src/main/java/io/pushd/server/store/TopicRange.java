package io.pushd.server.store;

/**
 * What a topic holds: {@code head} is the last sequence ever given (0 = none), {@code oldest} the
 * first one still kept (0 = none kept). Events {@code oldest..head} are all readable.
 */
public record TopicRange(long head, long oldest) {
    public static final TopicRange EMPTY = new TopicRange(0, 0);

    public boolean hasKeptEvents() {
        return oldest > 0;
    }
}
