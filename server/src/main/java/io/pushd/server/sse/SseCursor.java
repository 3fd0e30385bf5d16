package io.pushd.server.sse;

import io.pushd.protocol.ClientMessage;
import io.pushd.protocol.ErrorCodes;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code id:} of an SSE stream, which a browser sends back as {@code Last-Event-ID}: for one
 * topic the event ID itself, for several {@code T1@E-5,T2@E-0} (every topic with its position;
 * topic names are {@code [A-Za-z0-9_.:-]} and IDs {@code [0-9a-z-]}, so {@code @} and {@code ,}
 * never clash).
 */
public final class SseCursor {

    /** The longest {@code Last-Event-ID} read; a cursor of 64 topics fits easily. */
    static final int MAX_LENGTH = 64 * 1024;
    /** The longest event ID: a 32-character epoch, '-', a 19-digit sequence. */
    private static final int MAX_ID_LENGTH = 32 + 1 + 19;

    private SseCursor() {
    }

    /**
     * The longest cursor a stream of {@code topics} can send: a stream whose cursor could grow
     * past {@link #MAX_LENGTH} is refused at its start, for its {@code Last-Event-ID} would be
     * refused when it resumes (a plain EventSource then gives up for good).
     */
    public static void requireResumable(List<ClientMessage.Subscribe> topics) {
        if (topics.size() < 2) {
            return; // one topic: the event ID itself
        }
        long longest = 0;
        for (ClientMessage.Subscribe t : topics) {
            longest += t.topic().length() + 1 + MAX_ID_LENGTH + 1;
        }
        if (longest > MAX_LENGTH) {
            throw new ProtocolException(ErrorCodes.TOO_MANY_TOPICS, "these " + topics.size() + " topics make an"
                    + " event stream whose Last-Event-ID could pass " + MAX_LENGTH + " bytes, which a resume could"
                    + " not send back: split them over several streams");
        }
    }

    /**
     * The subscriptions with the positions of {@code lastEventId} (which wins over the query's)
     * applied. A cursor names topics; one it does not name keeps the query's position, and one it
     * names that the query does not is ignored (the query says what the stream follows). Throws
     * {@link ProtocolException} for a header no server stream could have sent.
     */
    public static List<ClientMessage.Subscribe> resume(List<ClientMessage.Subscribe> query, String lastEventId) {
        if (lastEventId == null || lastEventId.isEmpty()) {
            return query;
        }
        if (lastEventId.length() > MAX_LENGTH) {
            throw invalid("Last-Event-ID too long");
        }
        Map<String, EventId> positions = new HashMap<>();
        if (lastEventId.indexOf('@') < 0) {
            if (query.size() != 1) {
                throw invalid("Last-Event-ID: an event ID needs exactly one topic (expected: T1@ID,T2@ID for several)");
            }
            positions.put(query.get(0).topic(), parse(lastEventId));
        } else {
            for (String part : lastEventId.split(",", -1)) {
                int at = part.indexOf('@');
                if (at <= 0) {
                    throw invalid("Last-Event-ID: invalid cursor (expected: T1@ID,T2@ID)");
                }
                positions.put(part.substring(0, at), parse(part.substring(at + 1)));
            }
        }
        List<ClientMessage.Subscribe> out = new ArrayList<>(query.size());
        for (ClientMessage.Subscribe s : query) {
            EventId p = positions.get(s.topic());
            out.add(p == null ? s : new ClientMessage.Subscribe(s.topic(), p));
        }
        return out;
    }

    private static EventId parse(String id) {
        try {
            return EventId.parse(id);
        } catch (IllegalArgumentException e) {
            throw invalid("Last-Event-ID: " + e.getMessage());
        }
    }

    private static ProtocolException invalid(String message) {
        return new ProtocolException(ErrorCodes.INVALID_ID, message);
    }
}
