package io.pushd.loadtest.restart;

import com.fasterxml.jackson.databind.node.ArrayNode;
import io.pushd.loadtest.fleet.ClientRecord;
import io.pushd.loadtest.fleet.FleetAudit;
import io.pushd.loadtest.publish.PublishStats;
import io.pushd.loadtest.report.Report;
import io.pushd.protocol.EventId;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The exactly-once verdict after the clients caught up. Three sources are compared: what the
 * publisher was told (acknowledged IDs per topic), what the server holds (each topic's head), and
 * what each client received (see {@link ClientRecord}).
 *
 * <p>Every client subscribed live-only before the first publish, so it must hold exactly the run
 * {@code (its first subscribed head, current head]}. Every acknowledged ID must lie in that range,
 * and, because each publish is retried with its Idempotency-Key until acknowledged, every stored
 * event must have been acknowledged: an event stored whose answer was lost in a crash is answered
 * 200 with its original ID on the retry. So the stored range and the acknowledged set must be equal;
 * an ID a client holds that nobody acknowledged would show up as a difference.
 */
final class EventAudit {

    private EventAudit() {
    }

    /**
     * The publisher's record against the server's, over all topics.
     *
     * @param acknowledged IDs acknowledged
     * @param stored       events stored after the clients subscribed ({@code head - base} per topic)
     * @param bad          acknowledged IDs outside their topic's stored range, of another epoch, or twice
     * @param firstBad     a description of the first bad one, or null
     */
    record Comparison(long acknowledged, long stored, int bad, String firstBad) {

        /** Every acknowledged ID is distinct and stored, and every stored event was acknowledged. */
        boolean exact() {
            return bad == 0 && stored == acknowledged;
        }
    }

    /** Adds the exactly-once checks to {@code report}, and per-topic numbers for report.json. */
    static void verify(List<ClientRecord> clients, Map<String, EventId> heads, Map<String, List<EventId>> acked,
                       PublishStats publish, Report report) {
        Map<String, Long> bases = new HashMap<>();
        acked.keySet().forEach(t -> bases.put(t, baseSeq(clients, t)));
        Comparison c = compare(acked, heads, bases, report.data().putArray("topics"));
        report.check("acknowledged IDs are distinct and stored", c.bad() == 0, c.bad() == 0
                ? String.format(Locale.ROOT, "%,d acknowledged IDs over %d topics, each once, each within its topic's "
                + "stored range", c.acknowledged(), acked.size())
                : c.bad() + " bad, e.g. " + c.firstBad());
        publish.report(report);
        report.check("stored events = acknowledged events", c.exact(), String.format(Locale.ROOT,
                "%,d stored after the clients subscribed, %,d acknowledged", c.stored(), c.acknowledged()));

        // --- every client against the server, and the client library's own guards (never expected to fire).
        // Every client subscribed before the first publish and has its PushClient, so the fleet audit applies.
        FleetAudit.verify(clients, heads, report);
    }

    /**
     * Compares, per topic, the acknowledged IDs with the stored range {@code (base, head]}; one
     * object per topic goes into {@code topicsJson}.
     *
     * @param bases per topic the head the clients saw when they subscribed (before the first publish)
     */
    static Comparison compare(Map<String, List<EventId>> acked, Map<String, EventId> heads, Map<String, Long> bases,
                              ArrayNode topicsJson) {
        long ackedTotal = 0;
        long storedTotal = 0;
        int bad = 0;
        String firstBad = null;
        for (Map.Entry<String, List<EventId>> e : acked.entrySet()) {
            String topic = e.getKey();
            EventId head = heads.get(topic);
            long base = bases.getOrDefault(topic, 0L);
            long headSeq = head == null ? 0 : head.seq();
            long stored = Math.max(0, headSeq - base);
            storedTotal += stored;
            Set<Long> seen = new HashSet<>();
            for (EventId id : e.getValue()) {
                ackedTotal++;
                boolean ok = head != null && id.epoch().equals(head.epoch()) && id.seq() > base && id.seq() <= headSeq
                        && seen.add(id.seq());
                if (!ok && bad++ == 0) {
                    firstBad = topic + ": acknowledged " + id + " but the stored range is (" + base + ", "
                            + head + "] or it was acknowledged twice";
                }
            }
            topicsJson.addObject().put("topic", topic).put("baseSeq", base)
                    .put("head", head == null ? null : head.toString())
                    .put("stored", stored).put("acknowledged", e.getValue().size());
        }
        return new Comparison(ackedTotal, storedTotal, bad, firstBad);
    }

    /** The head each client of {@code topic} saw at its first subscribe; they all subscribed before publishing. */
    static long baseSeq(List<ClientRecord> clients, String topic) {
        long base = 0;
        for (ClientRecord c : clients) {
            if (c.topic().equals(topic) && c.firstHead() != null) {
                base = Math.max(base, c.firstHead().seq());
            }
        }
        return base;
    }
}
