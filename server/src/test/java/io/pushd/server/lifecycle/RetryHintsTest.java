package io.pushd.server.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryHintsTest {

    final RetryHints hints = new RetryHints(Duration.ofSeconds(5), 1000);

    @Test
    void theWindowIsTheMinimumUntilTheClientsNeedLongerAtTheTargetRate() {
        assertThat(hints.windowMillis(0)).isEqualTo(5_000);
        assertThat(hints.windowMillis(5_000)).isEqualTo(5_000);
        assertThat(hints.windowMillis(20_000)).isEqualTo(20_000);
    }

    @Test
    void hintsWithinAWindowCoverItAndStayInIt() {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (int i = 0; i < 10_000; i++) {
            long h = hints.within(1_000);
            min = Math.min(min, h);
            max = Math.max(max, h);
        }
        assertThat(min).isBetween(0L, 100L);
        assertThat(max).isBetween(900L, 1_000L);
        assertThat(hints.within(0)).isZero();
        for (int i = 0; i < 1_000; i++) {
            assertThat(hints.single()).isBetween(0L, 5_000L);
        }
    }

    @Test
    void anOverloadHintIsInTheUpperHalfOfAWindowThatGrowsWithTheLoadUpToAMinute() {
        for (int i = 0; i < 1_000; i++) {
            assertThat(hints.overload(0.5)).isBetween(2_500L, 5_000L); // below 1: the base window
            assertThat(hints.overload(3)).isBetween(7_500L, 15_000L);
            assertThat(hints.overload(1_000)).isBetween(30_000L, 60_000L);
        }
        RetryHints tiny = new RetryHints(Duration.ZERO, 1000);
        for (int i = 0; i < 1_000; i++) {
            assertThat(tiny.overload(1)).as("never under a second's window").isBetween(500L, 1_000L);
        }
    }

    @Test
    void aTargetRateBelowOneIsRefused() {
        assertThatThrownBy(() -> new RetryHints(Duration.ofSeconds(1), 0))
                .hasMessage("targetRate: 0 (expected: >= 1)");
    }
}
