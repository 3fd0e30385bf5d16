package io.pushd.server.history;

/**
 * A publish to a new topic while the node already holds {@code limits.maxTopics} topics. Every
 * topic's head is kept for the whole epoch (a sequence is never reused), so topics are never
 * freed: the limit bounds what anonymous publishers can make the heap hold. Existing topics keep
 * working.
 */
public final class TopicLimitException extends RuntimeException {

    public TopicLimitException(int maxTopics) {
        super("this server holds its limit of " + maxTopics + " topics; publish to an existing topic", null,
                false, false);
    }
}
