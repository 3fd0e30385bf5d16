package io.pushd.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.admission.ConnectionLimiter;
import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Tag values are the same on every machine, whatever its default locale. */
class ServerMetricsTagsTest {

    private final Locale before = Locale.getDefault();

    @AfterEach
    void restoreLocale() {
        Locale.setDefault(before);
    }

    @Test
    void tagValuesAreAsciiLowerCaseUnderATurkishDefaultLocale() {
        Locale.setDefault(Locale.forLanguageTag("tr-TR")); // "I".toLowerCase() is a dotless ı there
        ServerMetrics metrics = new ServerMetrics();
        metrics.connectionRefused(ConnectionLimiter.Refusal.PER_ADDRESS);
        metrics.acceptFailed();
        String scrape = metrics.scrape();
        assertThat(scrape)
                .contains("push_handshakes_total{outcome=\"admitted\",transport=\"websocket\"}")
                .contains("push_handshakes_total{outcome=\"refused_per_ip\",transport=\"sse\"}")
                .contains("push_handshakes_total{outcome=\"refused_draining\",transport=\"websocket\"}")
                .contains("push_connections_refused_total{reason=\"per_address\"} 1.0")
                .contains("push_connections_refused_total{reason=\"total\"} 0.0")
                .contains("push_connections_refused_total{reason=\"accept_failed\"} 1.0")
                .doesNotContain("\u0131");
    }
}
