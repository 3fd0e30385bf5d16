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
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Every meter the server exposes at {@code GET /metrics} (Prometheus text format). No meter has a
 * per-topic label: topics are created by clients, so such labels would grow without bound and
 * overwhelm Prometheus. Per-topic figures are available from {@code GET /v1/topics/{topic}}.
 */
public final class ServerMetrics {

    /** How a WebSocket upgrade ended. */
    public enum Handshake {
        ADMITTED, REFUSED_CONNECTIONS, REFUSED_PER_IP, REFUSED_RATE, REFUSED_STARTUP_RAMP, REJECTED_REQUEST,
        REFUSED_DRAINING
    }

    /** Why a TCP connection was refused or failed at accept. */
    public enum Refusal { PER_ADDRESS, TOTAL, ACCEPT_FAILED }

    private final Map<Refusal, Counter> refusals = new EnumMap<>(Refusal.class);
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Map<Handshake, Counter> handshakes = new EnumMap<>(Handshake.class);
    private final Map<ResetReason, Counter> resets = new EnumMap<>(ResetReason.class);
    private final Map<CloseCode, Counter> closes = new EnumMap<>(CloseCode.class);
    private final AtomicInteger subscriptions = new AtomicInteger();
    private final Counter published;
    private final Counter publishDeduplicated;
    private final Counter refusedForStorage;
    private final Counter framesDelivered;
    private final Counter bytesDelivered;
    private final Counter replayed;
    private final Counter slowConsumerCloses;
    private final DistributionSummary retryHints;
    private final Timer publishLatency;
    private final Timer fanoutLatency;

    public ServerMetrics() {
        for (Handshake h : Handshake.values()) {
            handshakes.put(h, Counter.builder("push.handshakes").description("WebSocket upgrades by outcome")
                    .tag("outcome", h.name().toLowerCase()).register(registry));
        }
        for (ResetReason r : ResetReason.values()) {
            resets.put(r, Counter.builder("push.resets").description("reset frames sent, by reason")
                    .tag("reason", r.wireName()).register(registry));
        }
        for (CloseCode c : CloseCode.values()) {
            closes.put(c, Counter.builder("push.closes.sent").description("close frames sent with the server's own code, by code")
                    .tag("code", Integer.toString(c.code())).register(registry));
        }
        for (Refusal r : Refusal.values()) {
            refusals.put(r, Counter.builder("push.connections.refused")
                    .description("TCP connections closed at accept (caps) or failed accepts")
                    .tag("reason", r.name().toLowerCase()).register(registry));
        }
        Gauge.builder("push.subscriptions", subscriptions, AtomicInteger::get)
                .description("topic subscriptions of open connections").register(registry);
        published = Counter.builder("push.events.published").description("events appended").register(registry);
        publishDeduplicated = Counter.builder("push.events.deduplicated")
                .description("publishes answered from an earlier Idempotency-Key").register(registry);
        refusedForStorage = Counter.builder("push.store.refused.publishes")
                .description("publishes refused (507 storage_full) because the disk had no room").register(registry);
        framesDelivered = Counter.builder("push.frames.delivered").description("event frames written to clients")
                .register(registry);
        bytesDelivered = Counter.builder("push.delivered").baseUnit("bytes")
                .description("payload bytes of event frames written").register(registry);
        replayed = Counter.builder("push.events.replayed").description("events written from the store (replay)")
                .register(registry);
        slowConsumerCloses = Counter.builder("push.slow.consumer.closes")
                .description("connections closed for not reading").register(registry);
        retryHints = DistributionSummary.builder("push.retry.hint").baseUnit("milliseconds")
                .description("retryMs hints sent with 1012/1013")
                .serviceLevelObjectives(1_000, 2_000, 5_000, 10_000, 30_000, 60_000).register(registry);
        publishLatency = Timer.builder("push.publish.latency").description("publish accepted to appended")
                .publishPercentileHistogram().maximumExpectedValue(Duration.ofSeconds(5)).register(registry);
        fanoutLatency = Timer.builder("push.fanout.latency")
                .description("event appended to its last live write").publishPercentileHistogram()
                .maximumExpectedValue(Duration.ofSeconds(5)).register(registry);
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

    /** Registers a gauge read at scrape time (connections, disk use, ...). */
    public <T> void gauge(String name, String description, String unit, T obj, ToDoubleFunction<T> f) {
        Gauge.builder(name, obj, f).description(description).baseUnit(unit).register(registry);
    }

    public void gauge(String name, String description, String unit, Supplier<Number> f) {
        Gauge.builder(name, f).description(description).baseUnit(unit).register(registry);
    }

    public MeterRegistry registry() {
        return registry;
    }

    public String scrape() {
        return registry.scrape();
    }

    public void handshake(Handshake outcome) {
        handshakes.get(outcome).increment();
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

    public void connectionRefused(Refusal reason) {
        refusals.get(reason).increment();
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
        framesDelivered.increment();
        bytesDelivered.increment(bytes);
        if (fromStore) {
            replayed.increment();
        }
    }

    public void fannedOut(long appendedNanos) {
        fanoutLatency.record(System.nanoTime() - appendedNanos, TimeUnit.NANOSECONDS);
    }
}
