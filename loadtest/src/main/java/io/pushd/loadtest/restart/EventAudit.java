package io.pushd.loadtest.restart;

import io.pushd.loadtest.fleet.ClientRecord;
import io.pushd.loadtest.fleet.FleetAudit;
import io.pushd.loadtest.publish.PublishStats;
import io.pushd.loadtest.report.Report;
import io.pushd.protocol.EventId;
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

    /** Adds the exactly-once checks to {@code report}; returns per-topic numbers for report.json. */
    static void verify(List<ClientRecord> clients, Map<String, EventId> heads, Map<String, List<EventId>> acked,
                       PublishStats publish, Report report) {
        // --- the publisher's record against the server's
        long ackedTotal = 0;
        long storedTotal = 0;
        int badAcked = 0;
        String firstBadAcked = null;
        var topicsJson = report.data().putArray("topics");
        for (Map.Entry<String, List<EventId>> e : acked.entrySet()) {
            String topic = e.getKey();
            EventId head = heads.get(topic);
            long base = baseSeq(clients, topic);
            long headSeq = head == null ? 0 : head.seq();
            long stored = Math.max(0, headSeq - base);
            storedTotal += stored;
            Set<Long> seen = new HashSet<>();
            for (EventId id : e.getValue()) {
                ackedTotal++;
                boolean ok = head != null && id.epoch().equals(head.epoch()) && id.seq() > base && id.seq() <= headSeq
                        && seen.add(id.seq());
                if (!ok) {
                    badAcked++;
                    if (firstBadAcked == null) {
                        firstBadAcked = topic + ": acknowledged " + id + " but the stored range is (" + base + ", "
                                + head + "] or it was acknowledged twice";
                    }
                }
            }
            topicsJson.addObject().put("topic", topic).put("baseSeq", base)
                    .put("head", head == null ? null : head.toString())
                    .put("stored", stored).put("acknowledged", e.getValue().size());
        }
        report.check("acknowledged IDs are distinct and stored", badAcked == 0, badAcked == 0
                ? String.format(Locale.ROOT, "%,d acknowledged IDs over %d topics, each once, each within its topic's "
                + "stored range", ackedTotal, acked.size())
                : badAcked + " bad, e.g. " + firstBadAcked);
        boolean allAcked = publish.gaveUp() == 0 && publish.rejected() == 0;
        report.check("every publish acknowledged", allAcked, String.format(Locale.ROOT,
                "%,d issued, %,d acknowledged (%,d answered 200 on a retry: stored, answer lost), %,d retries, "
                        + "%,d gave up, %,d rejected", publish.issued(), publish.acknowledged(), publish.deduplicated(),
                publish.retries(), publish.gaveUp(), publish.rejected()));
        report.check("stored events = acknowledged events", storedTotal == ackedTotal && badAcked == 0,
                String.format(Locale.ROOT, "%,d stored after the clients subscribed, %,d acknowledged", storedTotal,
                        ackedTotal));

        // --- every client against the server, and the client library's own guards (never expected to fire).
        // Every client subscribed before the first publish and has its PushClient, so the fleet audit applies.
        FleetAudit.verify(clients, heads, report);
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
