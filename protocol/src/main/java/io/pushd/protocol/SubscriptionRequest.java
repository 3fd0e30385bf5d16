package io.pushd.protocol;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The topics of a {@code GET /v1/live} query: {@code topic=NAME} (repeatable), each optionally
 * {@code NAME@ID} to resume after {@code ID}; {@code after=ID} is shorthand for one topic, and
 * {@code after=} (empty) means live only.
 */
public final class SubscriptionRequest {

    /** The query parameter that carries a token (see the access control section of the README). */
    public static final String ACCESS_TOKEN = "access_token";

    private SubscriptionRequest() {
    }

    /**
     * Parses decoded query parameters. Throws {@link ProtocolException} naming the parameter.
     *
     * @param maxTopics most topics one connection may follow
     */
    public static List<ClientMessage.Subscribe> parse(Map<String, List<String>> query, int maxTopics) {
        return parse(query, maxTopics, null);
    }

    /**
     * As {@link #parse(Map, int)}, except that a query without {@code topic} follows
     * {@code defaultTopic} (with its {@code after=}, if any): what a plain
     * {@code new WebSocket('/v1/live?after=' + lastId)} sends.
     *
     * @param defaultTopic the server's {@code server.defaultTopic}, or null when it has none
     */
    public static List<ClientMessage.Subscribe> parse(Map<String, List<String>> query, int maxTopics,
                                                      String defaultTopic) {
        if (defaultTopic != null && !query.containsKey("topic")) {
            Map<String, List<String>> withTopic = new LinkedHashMap<>(query);
            withTopic.put("topic", List.of(defaultTopic));
            query = withTopic;
        }
        for (String key : query.keySet()) {
            // access_token is the browsers' carrier of a token: read (and checked) by the server's auth
            if (!key.equals("topic") && !key.equals("after") && !key.equals(ACCESS_TOKEN)) {
                throw new ProtocolException(ErrorCodes.INVALID_QUERY,
                        "unknown query parameter '" + shorten(key) + "' (expected: topic, after, access_token)");
            }
        }
        List<String> topics = query.getOrDefault("topic", List.of());
        List<String> afters = query.getOrDefault("after", List.of());
        if (topics.isEmpty()) {
            throw new ProtocolException(ErrorCodes.INVALID_QUERY, "missing query parameter 'topic'");
        }
        if (topics.size() > maxTopics) {
            throw new ProtocolException(ErrorCodes.TOO_MANY_TOPICS,
                    "too many topics: " + topics.size() + " (expected: at most " + maxTopics + ")");
        }
        if (afters.size() > 1) {
            throw new ProtocolException(ErrorCodes.INVALID_QUERY, "'after' given more than once");
        }
        if (afters.size() == 1 && topics.size() != 1) {
            throw new ProtocolException(ErrorCodes.INVALID_QUERY,
                    "'after' needs exactly one topic; use topic=NAME@ID for several");
        }
        // sized for the topics (one, mostly), not the default 16 slots: built once per handshake
        Map<String, ClientMessage.Subscribe> result = new LinkedHashMap<>(Math.max(2, topics.size() * 2));
        for (String raw : topics) {
            int at = raw.indexOf('@');
            String name = at < 0 ? raw : raw.substring(0, at);
            if (!TopicName.isValid(name)) {
                throw new ProtocolException(ErrorCodes.INVALID_TOPIC,
                        "invalid topic '" + shorten(name) + "' (expected: 1-200 characters of [A-Za-z0-9_.:-])");
            }
            // NAME@ with nothing after it means live only, like after= empty.
            EventId after = at < 0 || at == raw.length() - 1 ? null : parseId(raw.substring(at + 1));
            if (afters.size() == 1) {
                if (at >= 0) {
                    throw new ProtocolException(ErrorCodes.INVALID_QUERY, "both 'after' and topic=NAME@ID given");
                }
                after = afters.get(0).isEmpty() ? null : parseId(afters.get(0));
            }
            if (result.put(name, new ClientMessage.Subscribe(name, after)) != null) {
                throw new ProtocolException(ErrorCodes.INVALID_QUERY, "topic '" + name + "' named twice");
            }
        }
        return new ArrayList<>(result.values());
    }

    private static EventId parseId(String text) {
        try {
            return EventId.parse(text);
        } catch (IllegalArgumentException e) {
            throw new ProtocolException(ErrorCodes.INVALID_ID, e.getMessage());
        }
    }

    private static String shorten(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }
}
