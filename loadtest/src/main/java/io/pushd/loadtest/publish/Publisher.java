package io.pushd.loadtest.publish;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.pushd.loadtest.Deadline;
import io.pushd.protocol.EventId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Recorder;

/**
 * Publishes at a fixed rate through the {@link TopicsApi}, round robin over the topics, and retries every
 * publish with the same {@code Idempotency-Key} until it is acknowledged (bounded by
 * {@code maxRetryTime}). That is what makes the acknowledged IDs a complete record: a publish
 * stored just before a crash, whose answer was lost, is answered 200 with its original ID by the
 * restarted server.
 *
 * <p>Each event body is {@code {"n":N,"sentNanos":T,"steady":B}}; {@code T} is this JVM's
 * {@link System#nanoTime()} at the first attempt, so clients in the same JVM measure end-to-end
 * latency.
 */
public final class Publisher implements AutoCloseable {

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);
    /** Connections opened as they are needed: one while the server keeps up, more during a backlog. */
    private static final int CONNECTIONS = 16;
    /** Requests pipelined on one connection before the next one is used (the server takes one publish at a time). */
    private static final int DEPTH = 4;
    private static final long MIN_RETRY_MS = 50;
    private static final long MAX_RETRY_MS = 1_000;

    private final TopicsApi api;
    private final List<String> topics;
    private final double ratePerSecond;
    private final String keyPrefix;
    private final long maxRetryNanos;
    private final int maxInFlight;
    private final ScheduledExecutorService scheduler;
    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, List<EventId>> acked = new LinkedHashMap<>();
    private final Recorder ackSteadyMicros = new Recorder(3);
    private final Recorder ackDisturbedMicros = new Recorder(3);

    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicLong issued = new AtomicLong();
    private final AtomicLong created = new AtomicLong();
    private final AtomicLong deduplicated = new AtomicLong();
    private final AtomicLong retries = new AtomicLong();
    private final AtomicLong refused503 = new AtomicLong();
    private final AtomicLong ioErrors = new AtomicLong();
    private final AtomicLong gaveUp = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();
    private final List<String> problems = new ArrayList<>();

    private volatile boolean running;
    private volatile boolean disturbed;
    private long startNanos;
    private long scheduled;

    /** The topics API a publisher of the server at {@code host:port} sends through. */
    public static TopicsApi api(String host, int port) {
        return new TopicsApi(host, port, CONNECTIONS, DEPTH, REQUEST_TIMEOUT);
    }

    /** As {@link #api(String, int)}, every request with {@code Authorization: Bearer bearerToken} (null: none). */
    public static TopicsApi api(String host, int port, String bearerToken) {
        return new TopicsApi(host, port, CONNECTIONS, DEPTH, REQUEST_TIMEOUT, bearerToken);
    }

    /**
     * @param keyPrefix    makes the keys of this run unique (an external server remembers keys for 24 h)
     * @param maxRetryTime a publish not acknowledged this long after its first attempt is abandoned
     * @param maxInFlight  publishes waiting for an answer or a retry; above it new ones are skipped
     */
    public Publisher(TopicsApi api, List<String> topics, double ratePerSecond, String keyPrefix, Duration maxRetryTime,
                     int maxInFlight) {
        this.api = api;
        this.topics = List.copyOf(topics);
        this.ratePerSecond = ratePerSecond;
        this.keyPrefix = keyPrefix;
        this.maxRetryNanos = maxRetryTime.toNanos();
        this.maxInFlight = maxInFlight;
        topics.forEach(t -> acked.put(t, new ArrayList<>()));
        // One thread on purpose: the load test must not compete with the server for the cores.
        this.scheduler = Executors.newSingleThreadScheduledExecutor(daemon("push-loadtest-publisher"));
    }

    /** Starts publishing at the configured rate. */
    public void start() {
        running = true;
        startNanos = System.nanoTime();
        scheduler.scheduleAtFixedRate(this::tick, 0, 5, TimeUnit.MILLISECONDS);
    }

    /** Starts no new publishes; the ones in flight keep retrying (see {@link #awaitSettled}). */
    public void stop() {
        running = false;
    }

    /** Waits until no publish is in flight; returns false on timeout. */
    public boolean awaitSettled(Duration timeout, Deadline deadline) throws InterruptedException {
        long end = System.nanoTime() + deadline.cap(timeout).toNanos();
        while (inFlight.get() > 0) {
            if (System.nanoTime() - end >= 0) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /** Issued so far, for progress lines. */
    public long issued() {
        return issued.get();
    }

    public int inFlight() {
        return inFlight.get();
    }

    public PublishStats stats() {
        return new PublishStats(issued.get(), created.get(), deduplicated.get(), retries.get(), refused503.get(),
                ioErrors.get(), gaveUp.get(), rejected.get(), skipped.get(), inFlight.get());
    }

    /** Per topic, every ID the server acknowledged, in the order the answers arrived. */
    public Map<String, List<EventId>> acknowledged() {
        Map<String, List<EventId>> copy = new LinkedHashMap<>();
        synchronized (acked) {
            acked.forEach((t, ids) -> copy.put(t, List.copyOf(ids)));
        }
        return copy;
    }

    /**
     * Marks the publishes started from now on as issued during a restart (true) or in steady state
     * (false). The flag goes into each event ({@code "steady"}), so publish and delivery latencies
     * can be reported for both separately: a restart's delays would otherwise hide the steady state.
     */
    public void disturbed(boolean value) {
        disturbed = value;
    }

    /** First attempt → acknowledgement, microseconds, of the publishes started in steady state or not. */
    public Recorder ackLatencyMicros(boolean steady) {
        return steady ? ackSteadyMicros : ackDisturbedMicros;
    }

    /** The first few unexpected answers, for the report. */
    public List<String> problems() {
        synchronized (problems) {
            return List.copyOf(problems);
        }
    }

    private void tick() {
        if (!running) {
            return;
        }
        long due = (long) ((System.nanoTime() - startNanos) / 1e9 * ratePerSecond);
        while (scheduled < due) {
            long n = scheduled++;
            if (inFlight.get() >= maxInFlight) {
                skipped.incrementAndGet();
                continue;
            }
            issued.incrementAndGet();
            inFlight.incrementAndGet();
            String topic = topics.get((int) (n % topics.size()));
            boolean steady = !disturbed;
            Attempt a = new Attempt(topic, keyPrefix + "-" + n, ("{\"n\":" + n + ",\"sentNanos\":" + System.nanoTime()
                    + ",\"steady\":" + steady + "}").getBytes(StandardCharsets.UTF_8), System.nanoTime(), steady);
            send(a);
        }
    }

    private void send(Attempt a) {
        api.publish(a.topic, a.key, a.body).whenComplete((r, err) -> {
            try {
                answered(a, r, err);
            } catch (RuntimeException e) {
                problem("publisher bug: " + e);
                finish();
                gaveUp.incrementAndGet();
            }
        });
    }

    private void answered(Attempt a, HttpPipeline.Answer r, Throwable err) {
        if (err != null) {
            ioErrors.incrementAndGet();
            retry(a, -1);
            return;
        }
        int status = r.status();
        if (status == 200 || status == 201) {
            EventId id = parseId(r.body());
            synchronized (acked) {
                acked.get(a.topic).add(id);
            }
            (status == 201 ? created : deduplicated).incrementAndGet();
            ackLatencyMicros(a.steady).recordValue(Math.max(0, (System.nanoTime() - a.firstNanos) / 1_000));
            finish();
        } else if (status == 503 || status >= 500) {
            if (status == 503) {
                refused503.incrementAndGet();
            }
            long hintMs = r.retryAfterSeconds() * 1_000;
            retry(a, hintMs);
        } else {
            rejected.incrementAndGet();
            problem(a.key + " on " + a.topic + ": " + status + " " + r.body());
            finish();
        }
    }

    private void retry(Attempt a, long hintMs) {
        if (System.nanoTime() - a.firstNanos > maxRetryNanos) {
            gaveUp.incrementAndGet();
            problem(a.key + " on " + a.topic + ": not acknowledged within " + maxRetryNanos / 1_000_000_000 + " s");
            finish();
            return;
        }
        retries.incrementAndGet();
        a.attempts++;
        // Honour Retry-After, but never wait longer than a second: a restart is short, and a long
        // pause would hide whether publishes work again as soon as the server is ready.
        long backoff = Math.min(MAX_RETRY_MS, MIN_RETRY_MS << Math.min(a.attempts, 10));
        long delay = hintMs > 0 ? Math.min(hintMs, MAX_RETRY_MS) : backoff;
        delay = delay / 2 + ThreadLocalRandom.current().nextLong(delay / 2 + 1);
        try {
            scheduler.schedule(() -> send(a), delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            gaveUp.incrementAndGet();
            finish();
        }
    }

    private EventId parseId(String body) {
        try {
            return EventId.parse(json.readTree(body).get("id").asText());
        } catch (java.io.IOException | RuntimeException e) {
            throw new IllegalStateException("unexpected publish answer: " + body, e);
        }
    }

    private void finish() {
        inFlight.decrementAndGet();
    }

    private void problem(String p) {
        synchronized (problems) {
            if (problems.size() < 20) {
                problems.add(p);
            }
        }
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Stops the timers; publishes still in flight are abandoned (the {@link TopicsApi} is the caller's). */
    @Override
    public void close() {
        running = false;
        scheduler.shutdownNow();
    }

    /** One publish across its attempts: the key and body never change. */
    private static final class Attempt {
        final String topic;
        final String key;
        final byte[] body;
        final long firstNanos;
        final boolean steady;
        volatile int attempts;

        Attempt(String topic, String key, byte[] body, long firstNanos, boolean steady) {
            this.steady = steady;
            this.topic = topic;
            this.key = key;
            this.body = body;
            this.firstNanos = firstNanos;
        }
    }
}
