package io.pushd.loadtest.publish;

import io.pushd.loadtest.report.Report;
import java.util.Locale;

/**
 * What the publisher did.
 *
 * @param issued       publishes started (each with its own Idempotency-Key)
 * @param created      answered 201: stored by this request
 * @param deduplicated answered 200 on a retry: an earlier attempt was stored but its answer was lost
 * @param retries      attempts after the first (failed connection, timeout, 503, 5xx)
 * @param refused503   503 answers (draining or overloaded)
 * @param ioErrors     attempts that failed without an answer (server down, connection reset)
 * @param gaveUp       publishes abandoned after the retry bound: the run fails
 * @param rejected     4xx answers other than 503: a load-test or server bug, the run fails
 * @param skipped      publishes not started because too many were in flight
 * @param inFlight     publishes still waiting for an answer or a retry
 */
public record PublishStats(long issued, long created, long deduplicated, long retries, long refused503,
                           long ioErrors, long gaveUp, long rejected, long skipped, long inFlight) {

    public long acknowledged() {
        return created + deduplicated;
    }

    /**
     * The one meaning of "every publish acknowledged": each publish due was started, none was
     * abandoned or refused, none is still waiting.
     */
    public boolean allAcknowledged() {
        return gaveUp == 0 && rejected == 0 && skipped == 0 && inFlight == 0;
    }

    /** Adds the check "every publish acknowledged" and the {@code "publisher"} numbers to {@code report}. */
    public void report(Report report) {
        report.check("every publish acknowledged", allAcknowledged(), String.format(Locale.ROOT,
                "%,d issued, %,d acknowledged (%,d answered 200 on a retry: stored, answer lost), %,d retries, "
                        + "%,d gave up, %,d rejected, %,d skipped, %,d unanswered", issued, acknowledged(),
                deduplicated, retries, gaveUp, rejected, skipped, inFlight));
        report.data().putObject("publisher")
                .put("issued", issued).put("acknowledged", acknowledged()).put("created", created)
                .put("deduplicated", deduplicated).put("retries", retries).put("refused503", refused503)
                .put("ioErrors", ioErrors).put("gaveUp", gaveUp).put("rejected", rejected).put("skipped", skipped)
                .put("inFlight", inFlight);
    }
}
