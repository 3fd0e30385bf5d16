package io.pushd.server.history;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sequences for one node: continues from the heads the store recovered. The publisher's writer only. A
 * head is kept for every topic of the epoch, so that no sequence is ever handed out twice; new
 * topics beyond {@code maxTopics} are refused with {@link TopicLimitException}. Needs no
 * reservation: {@link #reserve} answers at once with this counter itself.
 */
public final class LocalSequencer implements Sequencer, Sequencer.Numbers {

    private static final Logger log = LoggerFactory.getLogger(LocalSequencer.class);

    private final Map<String, Long> heads;
    private final int maxTopics;
    private final CompletableFuture<Numbers> ready = CompletableFuture.completedFuture(this);
    private boolean limitLogged;

    /** No limit on the number of topics. */
    public LocalSequencer(Map<String, Long> recoveredHeads) {
        this(recoveredHeads, Integer.MAX_VALUE);
    }

    public LocalSequencer(Map<String, Long> recoveredHeads, int maxTopics) {
        this.heads = new HashMap<>(recoveredHeads);
        this.maxTopics = maxTopics;
    }

    @Override
    public CompletionStage<Numbers> reserve(List<String> topics) {
        return ready;
    }

    @Override
    public long next(String topic) {
        if (heads.size() >= maxTopics && !heads.containsKey(topic)) {
            if (!limitLogged) {
                // the operator's business once; each refused client gets its 507
                log.warn("{} topics: the limit (limits.maxTopics) is reached; publishes to new topics are refused",
                        heads.size());
                limitLogged = true;
            }
            throw new TopicLimitException(maxTopics);
        }
        return heads.merge(topic, 1L, Long::sum);
    }

    @Override
    public void release(String topic, long seq) {
        // a new topic whose first number comes back holds nothing: it gives its limits.maxTopics
        // slot back too (a refused publish, 507 storage_full, stored nothing and uses nothing)
        heads.computeIfPresent(topic, (t, head) -> head != seq ? head : seq == 1 ? null : seq - 1);
    }
}
