package io.pushd.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.ResetReason;
import io.pushd.server.admission.ConnectionLimiter;
import io.pushd.server.auth.AccessControl;
import io.pushd.server.auth.DenialReason;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Every meter the server exposes at {@code GET /metrics} (Prometheus text format). No meter has a
 * per-topic label: topics are created by clients, so such labels would grow without bound and
 * overwhelm Prometheus. Per-topic figures are available from {@code GET /v1/topics/{topic}}.
 */
public final class ServerMetrics {

    /** The transports, as the {@code transport} tag names them. */
    public static final List<String> TRANSPORTS = List.of("websocket", "sse");

    /** How a WebSocket upgrade or an SSE stream's start ended. */
    public enum Handshake {
        ADMITTED, REFUSED_CONNECTIONS, REFUSED_PER_IP, REFUSED_RATE, REFUSED_STARTUP_RAMP, REJECTED_REQUEST,
        REFUSED_DRAINING, REFUSED_PER_SUBJECT, REFUSED_UNAUTHORIZED, REFUSED_STARTING
    }

    private static final String REFUSED_DESCRIPTION = "TCP connections closed at accept (caps) or failed accepts";

    // Declared in registration order: each initializer registers its meter with this registry.
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Map<String, Map<Handshake, Counter>> handshakes = handshakeCounters();
    private final Map<ResetReason, Counter> resets = counters(ResetReason.class, "push.resets",
            "reset frames sent, by reason", "reason", ResetReason::wireName);
    private final Map<CloseCode, Counter> closes = counters(CloseCode.class, "push.closes.sent",
            "close frames sent with the server's own code, by code", "code", c -> Integer.toString(c.code()));
    private final Map<ConnectionLimiter.Refusal, Counter> refusals = counters(ConnectionLimiter.Refusal.class,
            "push.connections.refused", REFUSED_DESCRIPTION, "reason", r -> r.name().toLowerCase(Locale.ROOT));
    // the same meter name as the caps' refusals: one place to look for connections that never got in
    private final Counter acceptFailures = Counter.builder("push.connections.refused")
            .description(REFUSED_DESCRIPTION).tag("reason", "accept_failed").register(registry);
    private final Map<String, Counter> authDenied = registerAuthDenied();
    private final AtomicInteger subscriptions = registerSubscriptions();
    private final Counter published = counter("push.events.published", null, "events appended");
    private final Counter publishDeduplicated = counter("push.events.deduplicated", null,
            "publishes answered from an earlier Idempotency-Key");
    private final Counter refusedForStorage = counter("push.store.refused.publishes", null,
            "publishes refused (507 storage_full) because the disk had no room");
    private final Counter framesDelivered = counter("push.frames.delivered", null, "event frames written to clients");
    private final Counter bytesDelivered = counter("push.delivered", "bytes", "payload bytes of event frames written");
    private final Counter replayed = counter("push.events.replayed", null, "events written from the store (replay)");
    private final Counter slowConsumerCloses = counter("push.slow.consumer.closes", null,
            "connections closed for not reading");
    private final DistributionSummary retryHints = DistributionSummary.builder("push.retry.hint")
            .baseUnit("milliseconds").description("retryMs hints sent with 1012/1013")
            .serviceLevelObjectives(1_000, 2_000, 5_000, 10_000, 30_000, 60_000).register(registry);
    private final Timer publishLatency = latency("push.publish.latency", "publish accepted to appended");
    private final Timer fanoutLatency = latency("push.fanout.latency", "event appended to its last live write");

    public ServerMetrics() {
        new JvmMemoryMetrics().bindTo(registry);
        new JvmGcMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        Gauge.builder("netty.direct.memory.used", PlatformDependent::usedDirectMemory).baseUnit("bytes")
                .description("direct memory Netty has reserved").register(registry);
        Gauge.builder("netty.pooled.direct.memory.used",
                        () -> PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory())
                .baseUnit("bytes").description("direct memory of the pooled allocator").register(registry);
    }

    /** One counter per constant, all registered up front so every outcome is scraped as 0 until it happens. */
    private <E extends Enum<E>> Map<E, Counter> counters(Class<E> type, String name, String description,
                                                         String tag, Function<E, String> tagValue) {
        Map<E, Counter> out = new EnumMap<>(type);
        for (E e : type.getEnumConstants()) {
            out.put(e, Counter.builder(name).description(description).tag(tag, tagValue.apply(e)).register(registry));
        }
        return out;
    }

    private Map<String, Map<Handshake, Counter>> handshakeCounters() {
        Map<String, Map<Handshake, Counter>> out = new HashMap<>();
        for (String transport : TRANSPORTS) {
            Map<Handshake, Counter> byOutcome = new EnumMap<>(Handshake.class);
            for (Handshake h : Handshake.values()) {
                byOutcome.put(h, Counter.builder("push.handshakes")
                        .description("WebSocket upgrades and SSE starts by outcome")
                        .tag("outcome", h.name().toLowerCase(Locale.ROOT)).tag("transport", transport).register(registry));
            }
            out.put(transport, byOutcome);
        }
        return out;
    }

    private Counter counter(String name, String unit, String description) {
        return Counter.builder(name).baseUnit(unit).description(description).register(registry);
    }

    private Timer latency(String name, String description) {
        return Timer.builder(name).description(description).publishPercentileHistogram()
                .maximumExpectedValue(Duration.ofSeconds(5)).register(registry);
    }

    /** Tagged by {@link DenialReason#code()} and the two permission refusals; never by anything of the token. */
    private Map<String, Counter> registerAuthDenied() {
        Map<String, Counter> out = new LinkedHashMap<>();
        for (DenialReason r : DenialReason.values()) {
            out.put(r.code(), null);
        }
        out.put(AccessControl.TOPIC_NOT_ALLOWED, null);
        out.put(AccessControl.PUBLISH_NOT_ALLOWED, null);
        out.replaceAll((reason, none) -> Counter.builder("push.auth.denied")
                .description("requests and in-band commands refused by access control, by reason")
                .tag("reason", reason).register(registry));
        return Map.copyOf(out);
    }

    private AtomicInteger registerSubscriptions() {
        AtomicInteger n = new AtomicInteger();
        Gauge.builder("push.subscriptions", n, AtomicInteger::get)
                .description("topic subscriptions of open connections").register(registry);
        return n;
    }

    /** Registers a gauge read at scrape time (connections, disk use, ...). */
    public <T> void gauge(String name, String description, String unit, T obj, ToDoubleFunction<T> f) {
        Gauge.builder(name, obj, f).description(description).baseUnit(unit).register(registry);
    }

    public void gauge(String name, String description, String unit, Supplier<Number> f) {
        Gauge.builder(name, f).description(description).baseUnit(unit).register(registry);
    }

    /** A gauge per transport, read at scrape time. */
    public void gaugePerTransport(String name, String description, Function<String, Number> f) {
        for (String transport : TRANSPORTS) {
            Gauge.builder(name, () -> f.apply(transport)).description(description).tag("transport", transport)
                    .register(registry);
        }
    }

    public MeterRegistry registry() {
        return registry;
    }

    public String scrape() {
        return registry.scrape();
    }

    public void handshake(Handshake outcome) {
        handshake(outcome, "websocket");
    }

    public void handshake(Handshake outcome, String transport) {
        handshakes.get(transport).get(outcome).increment();
    }

    public void reset(ResetReason reason) {
        resets.get(reason).increment();
    }

    public void closeSent(CloseCode code, long retryMs) {
        closes.get(code).increment();
        if (retryMs >= 0) {
            retryHints.record(retryMs);
        }
    }

    /** A TCP connection closed at accept by a cap. */
    public void connectionRefused(ConnectionLimiter.Refusal reason) {
        refusals.get(reason).increment();
    }

    /** An accept that failed (out of descriptors, ...): counted with the refusals, reason {@code accept_failed}. */
    public void acceptFailed() {
        acceptFailures.increment();
    }

    /** @param reason a {@link DenialReason#code()} or one of the {@link AccessControl} constants */
    public void authDenied(String reason) {
        Counter c = authDenied.get(reason);
        if (c != null) {
            c.increment();
        }
    }

    public void slowConsumerClosed() {
        slowConsumerCloses.increment();
    }

    public void subscribed() {
        subscriptions.incrementAndGet();
    }

    public void unsubscribed() {
        subscriptions.decrementAndGet();
    }

    public void published(long acceptedNanos, long appendedNanos) {
        published.increment();
        publishLatency.record(appendedNanos - acceptedNanos, TimeUnit.NANOSECONDS);
    }

    public void deduplicated() {
        publishDeduplicated.increment();
    }

    public void refusedForStorage() {
        refusedForStorage.increment();
    }

    public void delivered(int bytes, boolean fromStore) {
        delivered(1, bytes, fromStore);
    }

    /** {@code frames} deliveries of {@code bytes} in all: counted once per batch, not per frame. */
    public void delivered(int frames, long bytes, boolean fromStore) {
        if (frames == 0) {
            return;
        }
        framesDelivered.increment(frames);
        bytesDelivered.increment(bytes);
        if (fromStore) {
            replayed.increment(frames);
        }
    }

    public void fannedOut(long appendedNanos) {
        fanoutLatency.record(System.nanoTime() - appendedNanos, TimeUnit.NANOSECONDS);
    }
}
