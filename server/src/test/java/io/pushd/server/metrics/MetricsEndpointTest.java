package io.pushd.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.PushServer;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code GET /metrics}: each counter moves when its event happens. */
class MetricsEndpointTest {

    @TempDir
    Path dataDir;
    PushServer server;

    @BeforeEach
    void start() throws Exception {
        ServerConfig c = TestServers.config(dataDir);
        server = TestServers.start(c.withLimits(c.limits().withMaxConnections(2)));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private String scrape() {
        Http.Response r = Http.get(server.port(), "/metrics");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header("content-type")).startsWith("text/plain");
        return r.body();
    }

    /** The value of the sample {@code name} whose labels contain {@code labelPart} (empty: any). */
    static double value(String scrape, String name, String labelPart) {
        Pattern p = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*})? (\\S+)$");
        Matcher m = p.matcher(scrape);
        while (m.find()) {
            String labels = m.group(1) == null ? "" : m.group(1);
            if (labels.contains(labelPart)) {
                return Double.parseDouble(m.group(2));
            }
        }
        throw new AssertionError("no sample " + name + " with " + labelPart);
    }

    @Test
    void publishingCountsEventsAndRecordsPublishLatency() {
        double before = value(scrape(), "push_events_published_total", "");
        Http.publish(server.port(), "t", "{}");
        Http.publish(server.port(), "t", "{}", "key-1");
        Http.publish(server.port(), "t", "{}", "key-1");
        String after = scrape();
        assertThat(value(after, "push_events_published_total", "")).isEqualTo(before + 2);
        assertThat(value(after, "push_events_deduplicated_total", "")).isEqualTo(1);
        assertThat(value(after, "push_publish_latency_seconds_count", "")).isEqualTo(2);
        assertThat(value(after, "push_topics", "")).isEqualTo(1);
        assertThat(value(after, "push_store_disk_bytes", "")).isPositive();
        assertThat(value(after, "push_store_oldest_event_age_seconds", "")).isGreaterThanOrEqualTo(0);
    }

    @Test
    void connectionsSubscriptionsDeliveriesAndReplaysAreCounted() throws Exception {
        // A subscriber that registers while an event's fan-out runs may get it live, and another
        // publish being answered does not mean that fan-out ended (a publish can be appended on its
        // own event loop meanwhile). So a witness follows t first: once the fan-out timer counted
        // event 1, which is recorded after its last write, event 1 can reach the client by replay
        // alone.
        try (WsClient witness = WsClient.connect(server.port(), "topic=t")) {
            assertThat(witness.next().path("type").asText()).isEqualTo("subscribed");
            Http.publish(server.port(), "t", "{}");
            witness.awaitEvents(1, Duration.ofSeconds(5));
            awaitFanouts(1);
            try (WsClient c = WsClient.connect(server.port(), "topic=t@" + server.epoch() + "-0&topic=u")) {
                c.awaitEvents(1, Duration.ofSeconds(5));
                // Counted before it is written. Event 2 may reach c by replay too, if it is
                // appended before c's hand-off to live ends: so the replays are counted here.
                assertThat(value(scrape(), "push_events_replayed_total", "")).isEqualTo(1);
                Http.publish(server.port(), "t", "{}");
                c.awaitEvents(1, Duration.ofSeconds(5));
                witness.awaitEvents(1, Duration.ofSeconds(5));
                awaitFanouts(2);
                String s = scrape();
                assertThat(value(s, "push_connections", "transport=\"websocket\"")).isEqualTo(2);
                assertThat(value(s, "push_connections", "transport=\"sse\"")).isZero();
                assertThat(value(s, "push_subscriptions", "")).isEqualTo(3);
                assertThat(value(s, "push_handshakes_total", "outcome=\"admitted\",transport=\"websocket\""))
                        .isEqualTo(2);
                assertThat(value(s, "push_frames_delivered_total", "")).as("2 to each").isEqualTo(4);
                assertThat(value(s, "push_delivered_bytes_total", "")).isPositive();
                assertThat(value(s, "push_fanout_latency_seconds_count", "")).as("one per event").isEqualTo(2);
            }
        }
    }

    /**
     * Connects once {@code admitted} connections are counted. A connection is admitted after its
     * 101 is written, so its client can connect again before that: under load (CI's parallel test
     * JVMs) the next upgrade, on another event loop, was admitted first and an earlier one refused.
     */
    private WsClient connectWhenAdmitted(int admitted, String query) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (value(scrape(), "push_connections", "transport=\"websocket\"") < admitted && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        return WsClient.connect(server.port(), query);
    }

    /** The fan-out timer is recorded after an event's last write, which a client can read first. */
    private void awaitFanouts(int count) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (value(scrape(), "push_fanout_latency_seconds_count", "") < count && System.nanoTime() < until) {
            Thread.sleep(10);
        }
    }

    @Test
    void resetsAreCountedByReason() throws Exception {
        try (WsClient c = WsClient.connect(server.port(), "topic=t@" + server.epoch() + "-5")) {
            c.next();
            assertThat(c.next().path("reason").asText()).isEqualTo("future");
            assertThat(value(scrape(), "push_resets_total", "reason=\"future\"")).isEqualTo(1);
            assertThat(value(scrape(), "push_resets_total", "reason=\"expired\"")).isZero();
        }
    }

    @Test
    void refusedConnectionsCountCloseCodeHandshakeOutcomeAndHint() throws Exception {
        try (WsClient a = WsClient.connect(server.port(), "topic=t");
             WsClient b = WsClient.connect(server.port(), "topic=t");
             WsClient refused = connectWhenAdmitted(2, "topic=t")) {
            assertThat(refused.awaitClose(Duration.ofSeconds(5))).isEqualTo(1013);
            String s = scrape();
            assertThat(value(s, "push_closes_sent_total", "code=\"1013\"")).isEqualTo(1);
            assertThat(value(s, "push_handshakes_total", "outcome=\"refused_connections\",transport=\"websocket\""))
                    .isEqualTo(1);
            assertThat(value(s, "push_retry_hint_milliseconds_count", "")).isEqualTo(1);
        }
    }

    @Test
    void rejectedUpgradeRequestsAreCounted() {
        Http.get(server.port(), "/v1/live?topic=bad!"); // not even an upgrade: 400
        assertThat(value(scrape(), "push_handshakes_total", "outcome=\"rejected_request\",transport=\"websocket\""))
                .isEqualTo(1);
    }

    @Test
    void jvmAndNettyMemoryGaugesAreExposed() {
        String s = scrape();
        assertThat(s).contains("jvm_memory_used_bytes", "jvm_gc_", "netty_direct_memory_used_bytes",
                "netty_pooled_direct_memory_used_bytes", "process_uptime_seconds");
    }
}
