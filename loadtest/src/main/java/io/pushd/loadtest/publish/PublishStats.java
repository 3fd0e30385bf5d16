package io.pushd.loadtest.publish;

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
 */
public record PublishStats(long issued, long created, long deduplicated, long retries, long refused503,
                           long ioErrors, long gaveUp, long rejected, long skipped) {

    public long acknowledged() {
        return created + deduplicated;
    }
}
