package io.pushd.server.cluster;

import io.lettuce.core.RedisNoScriptException;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.history.Sequencer;
import io.pushd.server.history.TopicLimitException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's sequencer: Redis. A batch is one pipelined round of {@link Scripts#PUBLISH}, one
 * call per event, each storing the event with its number (and answering a repeated idempotency
 * key) atomically; so no number is ever lost or handed out twice, whichever node publishes.
 * Events Redis did not take (it is away, or slower than {@code cluster.redisTimeout}) are refused
 * with {@link Unavailable}: the client gets 503 with Retry-After and retries with its key.
 */
public final class RedisSequencer implements Sequencer {

    private static final Logger log = LoggerFactory.getLogger(RedisSequencer.class);

    /** Redis did not answer; nothing is known to be stored (retry with the same Idempotency-Key). */
    public static final class Unavailable extends RejectedExecutionException {
        Unavailable(Throwable cause) {
            super("the shared history (Redis) is unavailable: " + cause.getMessage());
        }
    }

    private final RedisLink redis;
    private final RedisHistory history;
    private final byte[] retentionCount;
    private final byte[] retentionAgeMillis;
    private final byte[] dedupeMillis;
    private final long timeoutMillis;
    private final int maxTopics;
    private volatile long lastFailureLog;

    RedisSequencer(RedisLink redis, RedisHistory history, ServerConfig.Store store, java.time.Duration timeout,
                   int maxTopics) {
        this.redis = redis;
        this.maxTopics = maxTopics;
        this.history = history;
        this.retentionCount = RedisKeys.bytes(Long.toString(store.retentionCount()));
        this.retentionAgeMillis = RedisKeys.bytes(Long.toString(store.retentionAge().toMillis()));
        this.dedupeMillis = RedisKeys.bytes(Long.toString(Math.max(1, store.dedupeWindow().toMillis())));
        this.timeoutMillis = timeout.toMillis() + 1000; // Lettuce times the command out first
    }

    @Override
    public boolean storesEvents() {
        return true;
    }

    @Override
    public CompletionStage<Numbers> reserve(List<String> topics) {
        throw new UnsupportedOperationException("the Redis sequencer stores events: reserve(topics, publishes)");
    }

    @Override
    public CompletionStage<Numbers> reserve(List<String> topics, List<? extends Publish> publishes) {
        Object[] answers = new Object[publishes.size()];
        List<Integer> todo = new ArrayList<>(publishes.size());
        java.util.Set<String> refused = history.overTopicLimit(topics);
        for (int i = 0; i < answers.length; i++) {
            if (refused.contains(publishes.get(i).topic())) {
                answers[i] = new TopicLimitException(maxTopics); // never sent: Redis makes no topic for it
            } else {
                todo.add(i);
            }
        }
        run(publishes, todo, answers);
        List<Integer> noScript = new ArrayList<>();
        for (int i = 0; i < answers.length; i++) {
            if (answers[i] instanceof RedisNoScriptException) {
                noScript.add(i); // Redis restarted and lost its script cache: these did not run
            }
        }
        if (!noScript.isEmpty()) {
            try {
                redis.loadScripts();
                run(publishes, noScript, answers);
            } catch (RuntimeException e) {
                noScript.forEach(i -> answers[i] = e);
            }
        }
        awaitReplicas(publishes, answers);
        return CompletableFuture.completedFuture(new Answers(publishes, answers));
    }

    /** {@code cluster.replicasToAck}: one WAIT (per master) for the events Redis stored in this batch. */
    private void awaitReplicas(List<? extends Publish> publishes, Object[] answers) {
        java.util.Set<String> stored = new java.util.LinkedHashSet<>();
        for (int i = 0; i < answers.length; i++) {
            if (answers[i] instanceof List<?>) {
                stored.add(publishes.get(i).topic());
            }
        }
        redis.awaitReplicas(stored);
    }

    /** One pipelined round: every call is sent before the first answer is awaited. */
    private void run(List<? extends Publish> publishes, List<Integer> which, Object[] answers) {
        List<CompletableFuture<List<Object>>> calls = new ArrayList<>(which.size());
        for (int i : which) {
            Publish p = publishes.get(i);
            try {
                calls.add(call(p));
            } catch (RuntimeException e) {
                calls.add(CompletableFuture.failedFuture(e));
            }
        }
        for (int k = 0; k < which.size(); k++) {
            try {
                answers[which.get(k)] = calls.get(k).get(timeoutMillis, TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                Throwable cause = e instanceof java.util.concurrent.ExecutionException || e instanceof CompletionException
                        ? e.getCause() : e;
                answers[which.get(k)] = cause;
            }
        }
    }

    private CompletableFuture<List<Object>> call(Publish p) {
        String topic = p.topic();
        String seenEpoch = "";
        long seenHead = 0;
        RedisHistory.Seen seen = history.seen(topic); // also after this node stopped following the topic
        if (seen != null) {
            seenEpoch = seen.epoch();
            seenHead = seen.head();
        }
        byte[][] keys = {RedisKeys.meta(topic), RedisKeys.stream(topic),
                p.key() == null ? RedisKeys.meta(topic) : RedisKeys.result(topic, p.key())};
        return redis.publish(keys, p.data(), retentionCount, retentionAgeMillis, RedisKeys.bytes(RedisKeys.newEpoch()),
                RedisKeys.bytes(seenEpoch), RedisKeys.bytes(Long.toString(seenHead)),
                p.key() == null ? new byte[0] : dedupeMillis, RedisKeys.channel(topic), redis.publishCommand());
    }

    /** The batch's answers, taken in order by the writer thread. */
    private final class Answers implements Numbers {
        private final List<? extends Publish> publishes;
        private final Object[] answers;
        private int next;
        private boolean created;
        private long ts;
        private String epoch;

        Answers(List<? extends Publish> publishes, Object[] answers) {
            this.publishes = publishes;
            this.answers = answers;
        }

        @Override
        @SuppressWarnings("unchecked")
        public long next(String topic) {
            int i = next++;
            Object a = answers[i];
            if (a instanceof TopicLimitException refused) {
                throw refused;
            }
            if (a instanceof Throwable t) {
                logFailure(t);
                throw new Unavailable(t);
            }
            List<Object> r = (List<Object>) a;
            epoch = RedisKeys.text(r.get(0));
            long seq = Long.parseLong(RedisKeys.text(r.get(1)));
            created = ((Long) r.get(2)) == 1L;
            ts = (Long) r.get(3);
            history.published(topic);
            if (created) {
                history.offer(topic, epoch, seq, ts, publishes.get(i).data());
            }
            return seq;
        }

        @Override
        public void release(String topic, long seq) {
            // stored in Redis already: nothing to give back
        }

        @Override
        public boolean created() {
            return created;
        }

        @Override
        public long timestampMillis() {
            return created ? ts : -1;
        }

        @Override
        public String epoch() {
            return epoch;
        }
    }

    private void logFailure(Throwable t) {
        long now = System.currentTimeMillis();
        if (now - lastFailureLog > 10_000) { // once per outage, not per refused publish
            lastFailureLog = now;
            log.warn("cluster: Redis did not take publishes ({}); answering 503 until it does", t.toString());
        }
    }
}
