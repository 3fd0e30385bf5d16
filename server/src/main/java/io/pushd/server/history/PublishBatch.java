package io.pushd.server.history;

import io.pushd.server.history.Publisher.Request;
import io.pushd.server.history.Publisher.Result;
import java.util.ArrayList;
import java.util.List;

/**
 * One batch of publishes in the writer (see {@link Publisher}) and what became of each, reused from batch to batch
 * so the writer allocates little: the requests as taken from the queue, the ones appended (with
 * their results and timestamps) and the ones answered from an earlier publish with the same
 * idempotency key.
 */
final class PublishBatch {

    final List<Request> requests;
    final List<Request> appended;
    final List<Result> results;
    final List<Long> timestamps;
    final List<Request> deduplicated = new ArrayList<>();
    final List<Result> dedupResults = new ArrayList<>();

    PublishBatch(int max) {
        requests = new ArrayList<>(max);
        appended = new ArrayList<>(max);
        results = new ArrayList<>(max);
        timestamps = new ArrayList<>(max);
    }

    void appended(Request r, long seq, long timestampMillis, String epoch) {
        appended.add(r);
        results.add(new Result(seq, true, epoch));
        timestamps.add(timestampMillis);
    }

    void deduplicated(Request r, long seq) {
        deduplicated(r, seq, null);
    }

    void deduplicated(Request r, long seq, String epoch) {
        deduplicated.add(r);
        dedupResults.add(new Result(seq, false, epoch));
    }

    void clear() {
        requests.clear();
        appended.clear();
        results.clear();
        timestamps.clear();
        deduplicated.clear();
        dedupResults.clear();
    }
}
