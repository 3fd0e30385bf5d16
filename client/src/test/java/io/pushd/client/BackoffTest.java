package io.pushd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The delay strategy on its own: no network, a seeded random. */
class BackoffTest {

    private static Backoff protocolDefault(long seed) {
        return Backoff.exponential(PushClientOptions.DEFAULT_BASE_DELAY, PushClientOptions.DEFAULT_MAX_DELAY,
                PushClientOptions.DEFAULT_MAX_HINT, new Random(seed));
    }

    @Test
    void aSeededRandomGivesExactlyTheseDelaysForAttemptsZeroToSix() {
        Backoff b = protocolDefault(42);
        List<Long> delays = new ArrayList<>();
        for (int attempt = 0; attempt <= 6; attempt++) {
            delays.add(b.nextDelay(attempt, OptionalLong.empty()).toMillis());
        }
        // caps 5 s, 10 s, 20 s, 40 s, then 60 s
        assertThat(delays).containsExactly(2776L, 6856L, 12149L, 18372L, 5741L, 22167L, 25309L);
    }

    @Test
    void everyDelayLiesInZeroToTheCappedExponentialAndUsesTheWholeRange() {
        Backoff b = protocolDefault(7);
        for (int attempt = 0; attempt <= 8; attempt++) {
            long cap = Math.min(60_000, 5_000L << attempt);
            long min = Long.MAX_VALUE;
            long max = 0;
            for (int i = 0; i < 5_000; i++) {
                long d = b.nextDelay(attempt, OptionalLong.empty()).toMillis();
                min = Math.min(min, d);
                max = Math.max(max, d);
            }
            assertThat(min).as("attempt %d", attempt).isGreaterThanOrEqualTo(0).isLessThan(cap / 20);
            assertThat(max).as("attempt %d", attempt).isLessThanOrEqualTo(cap).isGreaterThan(cap * 19 / 20);
        }
    }

    @Test
    void theCapDoublesFromFiveSecondsAndStopsAtSixty() {
        ExponentialBackoff b = (ExponentialBackoff) protocolDefault(1);
        assertThat(List.of(b.cap(0), b.cap(1), b.cap(2), b.cap(3), b.cap(4), b.cap(5), b.cap(30)))
                .containsExactly(5_000L, 10_000L, 20_000L, 40_000L, 60_000L, 60_000L, 60_000L);
    }

    @Test
    void hugeAttemptNumbersStayWithinTheMaximumWithoutOverflow() {
        ExponentialBackoff b = (ExponentialBackoff) protocolDefault(3);
        for (int attempt : new int[] {61, 62, 63, 64, 1_000, Integer.MAX_VALUE}) {
            assertThat(b.cap(attempt)).isEqualTo(60_000L);
            assertThat(b.nextDelay(attempt, OptionalLong.empty()).toMillis()).isBetween(0L, 60_000L);
        }
    }

    @Test
    void theServersHintIsTheDelayWhenPresentWhateverTheAttempt() {
        Backoff b = protocolDefault(5);
        assertThat(b.nextDelay(0, OptionalLong.of(1_234))).isEqualTo(Duration.ofMillis(1_234));
        assertThat(b.nextDelay(3, OptionalLong.of(4_321))).isEqualTo(Duration.ofMillis(4_321));
        assertThat(b.nextDelay(0, OptionalLong.of(0))).isEqualTo(Duration.ZERO);
        // beyond the 60 s cap of its own delays, a server's wish is still honoured
        assertThat(b.nextDelay(0, OptionalLong.of(90_000))).isEqualTo(Duration.ofSeconds(90));
    }

    @Test
    void aHintBeyondMaxHintIsCutToMaxHint() {
        Backoff b = Backoff.exponential(Duration.ofSeconds(5), Duration.ofSeconds(60), Duration.ofMinutes(5),
                new Random(1));
        assertThat(b.nextDelay(0, OptionalLong.of(999_999_999_999L))).isEqualTo(Duration.ofMinutes(5));
    }

    @Test
    void aHintDoesNotConsumeRandomnessSoTheSequenceAfterItIsUnchanged() {
        Backoff withHint = protocolDefault(42);
        withHint.nextDelay(0, OptionalLong.of(100));
        assertThat(withHint.nextDelay(0, OptionalLong.empty()).toMillis()).isEqualTo(2776L);
    }

    @Test
    void invalidSettingsAreRefusedNamingTheSettingAndTheExpectedRange() {
        Random r = new Random(1);
        assertThatThrownBy(() -> Backoff.exponential(Duration.ZERO, Duration.ofSeconds(1), Duration.ofSeconds(1), r))
                .hasMessage("baseDelay: PT0S (expected: > 0)");
        assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(-1), Duration.ofSeconds(1), r))
                .hasMessage("maxDelay: PT-1S (expected: > 0)");
        assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(1), r))
                .hasMessage("maxDelay: PT1S (expected: >= baseDelay PT2S)");
        assertThatThrownBy(() -> protocolDefault(1).nextDelay(-1, OptionalLong.empty()))
                .hasMessage("attempt: -1 (expected: >= 0)");
    }
}
