package io.pushd.protocol;

import com.fasterxml.jackson.databind.JsonNode;

/** Text frames the server sends. See {@code protocol/README.md}. */
public sealed interface ServerMessage {

    String type();

    /**
     * Sent once per topic, before any event of it. {@code head}/{@code oldest} are null for an
     * empty topic; {@code epoch} is always there, so a client can resume an empty topic from
     * {@code <epoch>-0} and miss nothing published while it was away. {@code id} is the position
     * the subscription starts from (the requested ID, else the head, else {@code <epoch>-0}): a
     * client that stores the {@code id} of every frame resumes from it and misses nothing. Null
     * only when decoded from a server older than the field.
     */
    record Subscribed(String topic, EventId head, EventId oldest, String epoch, EventId id) implements ServerMessage {
        /** Without the position (as servers before the {@code id} field sent it). */
        public Subscribed(String topic, EventId head, EventId oldest, String epoch) {
            this(topic, head, oldest, epoch, null);
        }

        @Override
        public String type() {
            return "subscribed";
        }
    }

    /** One event; {@code data} is the JSON value that was published. */
    record Event(String topic, EventId id, long ts, JsonNode data) implements ServerMessage {
        @Override
        public String type() {
            return "event";
        }
    }

    /** The replay cannot be complete: reload state; events after {@code id} follow. */
    record Reset(String topic, EventId id, ResetReason reason) implements ServerMessage {
        @Override
        public String type() {
            return "reset";
        }
    }

    /**
     * A bad in-band command; the connection stays open. {@code topic} names the topic a
     * {@code topic_not_allowed} is about, else null.
     */
    record Error(String code, String message, String topic) implements ServerMessage {
        public Error(String code, String message) {
            this(code, message, null);
        }

        @Override
        public String type() {
            return "error";
        }
    }

    /**
     * The answer to an in-band {@code auth}: the new token holds. {@code expiresAt} is the epoch
     * millisecond the session would be closed with 4001 without another refresh, or null.
     */
    record Authenticated(Long expiresAt) implements ServerMessage {
        @Override
        public String type() {
            return "authenticated";
        }
    }
}
