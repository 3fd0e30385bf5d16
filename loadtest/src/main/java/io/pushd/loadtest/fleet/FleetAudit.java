package io.pushd.loadtest.fleet;

import io.pushd.client.PushClient;
import io.pushd.loadtest.report.Report;
import io.pushd.protocol.EventId;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Exactly-once check of a fleet whose clients subscribed live-only before the first publish: each
 * client must hold exactly the run {@code (head at its first subscribed, current head]} of its
 * topic, in order (see {@link ClientRecord}), and the client library's own guards (gap, reset,
 * duplicate, foreign epoch) must never have fired.
 */
public final class FleetAudit {

    /**
     * @param clientsWrong clients not holding exactly their range
     * @param firstProblem a description of the first such client, or null
     */
    public record Result(int clients, int clientsWrong, String firstProblem, long deliveries, long gaps, long resets,
                         long duplicatesDropped, long epochMismatchesDropped) {

        /** No event lost, duplicated or reordered anywhere. */
        public boolean exact() {
            return clientsWrong == 0 && gaps == 0 && resets == 0 && duplicatesDropped == 0
                    && epochMismatchesDropped == 0;
        }
    }

    private FleetAudit() {
    }

    /** Whether {@code c} holds {@code head} of its topic (or the topic had nothing new). */
    public static boolean caughtUp(ClientRecord c, EventId head) {
        long from = c.firstHead() == null ? 0 : c.firstHead().seq();
        return head == null || head.seq() <= from || c.lastSeq() >= head.seq();
    }

    /** Audits every client against its topic's head; adds two checks and {@code "deliveries"} to the report. */
    public static Result verify(List<ClientRecord> clients, Map<String, EventId> heads, Report report) {
        int wrong = 0;
        String firstWrong = null;
        long deliveries = 0;
        long gaps = 0;
        long resets = 0;
        long duplicates = 0;
        long foreign = 0;
        for (ClientRecord c : clients) {
            deliveries += c.count();
            String problem = problem(c, heads.get(c.topic()));
            if (problem != null) {
                wrong++;
                if (firstWrong == null) {
                    firstWrong = "client " + c.index() + " (" + c.topic() + "): " + problem;
                }
            }
            PushClient pc = c.client();
            if (pc != null) {
                gaps += pc.gaps();
                resets += pc.resets();
                duplicates += pc.duplicatesDropped();
                foreign += pc.epochMismatchesDropped();
            }
        }
        Result r = new Result(clients.size(), wrong, firstWrong, deliveries, gaps, resets, duplicates, foreign);
        report.check("every client holds every event exactly once, in order", wrong == 0, wrong == 0
                ? String.format(Locale.ROOT, "%d/%d clients hold exactly (subscribed head, head] of their topic; "
                + "%,d deliveries", clients.size(), clients.size(), deliveries)
                : wrong + "/" + clients.size() + " clients differ, e.g. " + firstWrong);
        report.check("no gap, reset, duplicate or foreign-epoch event (client counters)",
                gaps == 0 && resets == 0 && duplicates == 0 && foreign == 0,
                String.format(Locale.ROOT, "gaps %d, resets %d, duplicates dropped %d, foreign epoch dropped %d",
                        gaps, resets, duplicates, foreign));
        report.data().putObject("deliveries").put("total", deliveries).put("gaps", gaps).put("resets", resets)
                .put("duplicatesDropped", duplicates).put("epochMismatchesDropped", foreign)
                .put("clientsWrong", wrong);
        return r;
    }

    /** Null when the client holds exactly (first subscribed head, head], else what is wrong. */
    static String problem(ClientRecord c, EventId head) {
        if (c.firstViolation() != null || c.outOfOrder() > 0) {
            return c.outOfOrder() + " out-of-order events; first: " + c.firstViolation();
        }
        if (!c.subscribed()) {
            return "never subscribed";
        }
        long from = c.firstHead() == null ? 0 : c.firstHead().seq();
        long to = head == null ? 0 : head.seq();
        long expected = Math.max(0, to - from);
        if (expected == 0) {
            return c.count() == 0 ? null : "received " + c.count() + " events, expected none";
        }
        if (!head.epoch().equals(c.epoch())) {
            return "epoch " + c.epoch() + ", server " + head.epoch();
        }
        if (c.firstSeq() != from + 1) {
            return "first event seq " + c.firstSeq() + ", expected " + (from + 1);
        }
        if (c.lastSeq() != to) {
            return "last event seq " + c.lastSeq() + ", head " + to;
        }
        if (c.count() != expected) {
            return c.count() + " events for " + expected + " sequence numbers";
        }
        return null;
    }
}
