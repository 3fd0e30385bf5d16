package io.pushd.protocol;

/** Text frames a client sends. Same meaning as the query form of {@code GET /v1/live}. */
public sealed interface ClientMessage {

    /**
     * Follow a topic. {@code after} null means live only; otherwise events after that ID are
     * replayed first.
     */
    record Subscribe(String topic, EventId after) implements ClientMessage {
        public Subscribe {
            TopicName.require(topic);
        }
    }

    record Unsubscribe(String topic) implements ClientMessage {
        public Unsubscribe {
            TopicName.require(topic);
        }
    }

    /**
     * A new token for this session ({@code {"type":"auth","token":…}}): same {@code sub}, new
     * expiry and permissions. {@link #toString()} never shows the token.
     */
    record Auth(String token) implements ClientMessage {
        public Auth {
            if (token == null || token.isEmpty()) {
                throw new IllegalArgumentException("token: empty");
            }
        }

        @Override
        public String toString() {
            return "Auth[token=REDACTED]";
        }
    }
}
