package io.pushd.loadtest.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.client.PushClient;
import io.pushd.client.PushListener;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ResetReason;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.HdrHistogram.Recorder;

/**
 * What one client saw, checked as it arrives: the events of its one topic must be a contiguous,
 * increasing run of sequence numbers starting right after the head confirmed by the first
 * {@code subscribed}. That needs O(1) memory per client instead of a list of every ID, and is
 * exactly as strict: a run from {@code first} to {@code last} with {@code count == last - first + 1}
 * and no step other than +1 holds every event in between once and in order.
 *
 * <p>The listener methods run on the client's event loop only; the fields they write are volatile
 * (single writer) so the scenario thread can read them.
 */
public final class ClientRecord implements PushListener {

    /** "No such moment" for nanoTime values (which may be negative). */
    public static final long NONE = Long.MIN_VALUE;
    /** The failed attempts and opened connections kept per client, the last ones. */
    private static final int MAX_KEPT = 16;
    private static final int MAX_TRAILS = 5;

    private final int index;
    private final String topic;
    private final Recorder steadyLatencyMicros;
    private final Recorder disturbedLatencyMicros;
    /**
     * When each admitted connection was confirmed (its {@code subscribed} arrived). A handshake
     * the server answers with 1013 is not a reconnect: the client is not back yet.
     */
    private final Queue<Long> connectNanos = new ConcurrentLinkedQueue<>();
    private volatile boolean awaitingSubscribed;
    private volatile int refusedStatus;
    private volatile long refusedNanos = NONE;
    private final Queue<long[]> disconnects = new ConcurrentLinkedQueue<>();
    private final Queue<Failure> failures = new ConcurrentLinkedQueue<>();
    /** When the last {@value #MAX_KEPT} connections opened (handshake done, not yet subscribed). */
    private final Queue<Long> opens = new ConcurrentLinkedQueue<>();
    volatile PushClient client;

    private volatile boolean subscribed;
    private volatile EventId firstHead;
    private volatile String epoch;
    private volatile long firstSeq = -1;
    private volatile long lastSeq = -1;
    private volatile long count;
    private volatile long outOfOrder;
    private volatile String firstViolation;

    ClientRecord(int index, String topic, Recorder steadyLatencyMicros, Recorder disturbedLatencyMicros) {
        this.index = index;
        this.topic = topic;
        this.steadyLatencyMicros = steadyLatencyMicros;
        this.disturbedLatencyMicros = disturbedLatencyMicros;
    }

    @Override
    public void onSubscribed(String t, EventId head, EventId oldest) {
        if (awaitingSubscribed) {
            awaitingSubscribed = false;
            connectNanos.add(System.nanoTime());
        }
        if (!subscribed) {
            firstHead = head;
            subscribed = true;
        }
    }

    @Override
    public void onEvent(String t, EventId id, long ts, JsonNode data) {
        long now = System.nanoTime();
        JsonNode sent = data.get("sentNanos");
        if (sent != null && sent.canConvertToLong()) {
            long micros = (now - sent.asLong()) / 1_000;
            if (micros >= 0) {
                JsonNode steady = data.get("steady");
                (steady == null || steady.asBoolean() ? steadyLatencyMicros : disturbedLatencyMicros).recordValue(micros);
            }
        }
        long seq = id.seq();
        if (firstSeq < 0) {
            firstSeq = seq;
            epoch = id.epoch();
        } else if (!id.epoch().equals(epoch) || seq != lastSeq + 1) {
            outOfOrder++;
            if (firstViolation == null) {
                firstViolation = "after " + epoch + "-" + lastSeq + " came " + id;
            }
        }
        lastSeq = Math.max(lastSeq, seq);
        count++;
    }

    @Override
    public void onReset(String t, EventId id, ResetReason reason) {
        // Counted by PushClient.resets(); any reset fails the run.
        if (firstViolation == null) {
            firstViolation = "reset to " + id + " (" + reason + ")";
        }
    }

    @Override
    public void onConnected(long nanoTime) {
        awaitingSubscribed = true;
        opens.add(nanoTime);
        while (opens.size() > MAX_KEPT) {
            opens.poll();
        }
    }

    /**
     * A handshake the server answered 401 or 403 (a missing, bad or insufficient token), over
     * either transport: the client library retries it with backoff, but the same token will not
     * pass, so the run reports it instead of waiting for it.
     */
    @Override
    public void onAccessDenied(int status, String error) {
        refusedStatus = status;
        refusedNanos = System.nanoTime();
    }

    /** Kept (the last {@value #MAX_KEPT}) so that a run can say why a client did not come back. */
    @Override
    public void onConnectFailed(Throwable cause) {
        failures.add(new Failure(System.nanoTime(), String.valueOf(cause)));
        while (failures.size() > MAX_KEPT) {
            failures.poll();
        }
    }

    /** One failed attempt: when the client saw it fail ({@link System#nanoTime()}) and why. */
    public record Failure(long nanos, String cause) {
    }

    /** Whether the server refused a handshake (401/403) at or after {@code sinceNanos}. */
    public boolean refusedSince(long sinceNanos) {
        long t = refusedNanos;
        return t != NONE && t - sinceNanos >= 0;
    }

    /** The HTTP status of the last refused handshake (401/403), 0 if none. */
    public int refusedStatus() {
        return refusedStatus;
    }

    /**
     * "; K refused by the server (401: N, 403: M), e.g. client I" for the clients of {@code among}
     * refused since {@code sinceNanos}, or "" when none was.
     */
    public static String refusals(List<ClientRecord> among, long sinceNanos) {
        Map<Integer, Integer> byStatus = new TreeMap<>();
        ClientRecord first = null;
        for (ClientRecord c : among) {
            if (c.refusedSince(sinceNanos)) {
                byStatus.merge(c.refusedStatus(), 1, Integer::sum);
                first = first == null ? c : first;
            }
        }
        if (first == null) {
            return "";
        }
        StringBuilder s = new StringBuilder("; ").append(byStatus.values().stream().mapToInt(Integer::intValue).sum())
                .append(" refused by the server (");
        byStatus.forEach((status, n) -> s.append(status).append(": ").append(n).append(", "));
        s.setLength(s.length() - 2);
        return s.append("), e.g. client ").append(first.index()).append(" (").append(first.topic()).append(')')
                .toString();
    }

    /**
     * What happened to this client since {@code sinceNanos}, in order, times in seconds after it:
     * each failed attempt, opened connection, subscription and connection end (close code, hint), e.g. for a
     * client that is not back.
     */
    public String trail(long sinceNanos) {
        record Step(long nanos, String what) {
        }
        List<Step> steps = new ArrayList<>();
        for (long[] d : disconnects) {
            steps.add(new Step(d[0], "closed " + d[1] + (d[2] >= 0 ? String.format(Locale.ROOT, " (hint %.1f s)", d[2] / 1e3) : "")));
        }
        failures.forEach(f -> steps.add(new Step(f.nanos(), "failed: " + f.cause())));
        opens.forEach(t -> steps.add(new Step(t, "opened")));
        connectNanos.forEach(t -> steps.add(new Step(t, "subscribed")));
        StringBuilder s = new StringBuilder("client ").append(index).append(" (").append(topic).append(')');
        steps.stream().filter(st -> st.nanos() - sinceNanos >= 0)
                .sorted((x, y) -> Long.compare(x.nanos() - sinceNanos, y.nanos() - sinceNanos))
                .forEach(st -> s.append(String.format(Locale.ROOT, "; %.1f s %s", (st.nanos() - sinceNanos) / 1e9, st.what())));
        return s.toString();
    }

    /** {@link #trail} of the first {@value #MAX_TRAILS} of {@code clients}: why they are not back. */
    public static List<String> trails(List<ClientRecord> clients, long sinceNanos) {
        return clients.stream().limit(MAX_TRAILS).map(c -> c.trail(sinceNanos)).toList();
    }

    @Override
    public void onDisconnected(int closeCode, String reason) {
        // {when, code, the server's retryMs hint or -1}
        disconnects.add(new long[] {System.nanoTime(), closeCode,
                io.pushd.protocol.CloseCode.parseRetryMs(reason).orElse(-1)});
    }

    public int index() {
        return index;
    }

    public String topic() {
        return topic;
    }

    public PushClient client() {
        return client;
    }

    /** Whether the first {@code subscribed} arrived. */
    public boolean subscribed() {
        return subscribed;
    }

    /** The head confirmed by the first {@code subscribed} (null: the topic was empty). */
    public EventId firstHead() {
        return firstHead;
    }

    public String epoch() {
        return epoch;
    }

    /** Sequence of the first event received, -1 before. */
    public long firstSeq() {
        return firstSeq;
    }

    /** Highest sequence received, -1 before. */
    public long lastSeq() {
        return lastSeq;
    }

    public long count() {
        return count;
    }

    /** Events that were not exactly the next one (other epoch or not {@code last + 1}). */
    public long outOfOrder() {
        return outOfOrder;
    }

    /** A description of the first problem seen, or null. */
    public String firstViolation() {
        return firstViolation;
    }

    /** Every admitted connection (subscribed), in order. */
    public List<Long> connectNanos() {
        return new ArrayList<>(connectNanos);
    }

    /** The first admitted connection at or after {@code sinceNanos}, or {@link #NONE}. */
    public long firstConnectAfter(long sinceNanos) {
        for (long t : connectNanos) {
            if (t - sinceNanos >= 0) {
                return t;
            }
        }
        return NONE;
    }

    /**
     * One ended connection.
     *
     * @param nanos   when the client saw it end ({@link System#nanoTime()})
     * @param code    the close code (1006 when the connection just broke)
     * @param retryMs the server's hint, or -1
     */
    public record Disconnect(long nanos, int code, long retryMs) {
    }

    /** The first connection end at or after {@code sinceNanos}, or null. */
    public Disconnect firstDisconnectAfter(long sinceNanos) {
        for (long[] d : disconnects) {
            if (d[0] - sinceNanos >= 0) {
                return new Disconnect(d[0], (int) d[1], d[2]);
            }
        }
        return null;
    }

    /** The {@code retryMs} hints of 1012/1013 closes in {@code [fromNanos, toNanos)}. */
    public List<Long> hintsBetween(long fromNanos, long toNanos) {
        List<Long> hints = new ArrayList<>();
        for (long[] d : disconnects) {
            if (d[0] - fromNanos >= 0 && d[0] - toNanos < 0 && d[2] >= 0) {
                hints.add(d[2]);
            }
        }
        return hints;
    }

    /** When the connections that ended with {@code code} in {@code [fromNanos, toNanos)} ended. */
    public List<Long> closesBetween(long fromNanos, long toNanos, int code) {
        List<Long> out = new ArrayList<>();
        for (long[] d : disconnects) {
            if (d[0] - fromNanos >= 0 && d[0] - toNanos < 0 && d[1] == code) {
                out.add(d[0]);
            }
        }
        return out;
    }

    /** Close codes of connections that ended in {@code [fromNanos, toNanos)}. */
    public List<Integer> closeCodesBetween(long fromNanos, long toNanos) {
        List<Integer> out = new ArrayList<>();
        for (long[] d : disconnects) {
            if (d[0] - fromNanos >= 0 && d[0] - toNanos < 0) {
                out.add((int) d[1]);
            }
        }
        return out;
    }
}
