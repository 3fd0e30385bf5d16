package io.pushd.loadtest.restart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.pushd.loadtest.fleet.ClientRecord;
import org.junit.jupiter.api.Test;

class ReconnectStatsTest {

    private static final long T = 5_000_000_000L; // the trigger, nanoTime
    private static final long MS = 1_000_000L;

    @Test
    void firstLastSpreadAndTheBusiestSecondComeFromTheReconnectTimes() {
        ReconnectStats s = ReconnectStats.of(T, new long[] {T + 1_050 * MS, T + 100 * MS, ClientRecord.NONE,
                T + 5_000 * MS, T + 200 * MS});

        assertThat(s.clients()).isEqualTo(5);
        assertThat(s.reconnected()).isEqualTo(4);
        assertThat(s.firstMs()).isEqualTo(100);
        assertThat(s.lastMs()).isEqualTo(5_000);
        assertThat(s.spreadMs()).isEqualTo(4_900);
        // [100 ms, 1100 ms) holds 100, 200 and 1050
        assertThat(s.maxInAnySecond()).isEqualTo(3);
        assertThat(s.maxWindowFromMs()).isEqualTo(100);
        assertThat(s.maxShare()).isEqualTo(0.6);
        assertThat(s.p50Ms()).isCloseTo(200, within(1.0));
        assertThat(s.p99Ms()).isCloseTo(5_000, within(5.0));
    }

    @Test
    void reconnectsArePutIntoHundredMillisecondBinsFromTheTrigger() {
        ReconnectStats s = ReconnectStats.of(T, new long[] {T + 100 * MS, T + 199 * MS, T + 1_050 * MS,
                T + 5_000 * MS});

        assertThat(s.bins100ms()).hasSize(51);
        assertThat(s.bins100ms()[1]).isEqualTo(2);
        assertThat(s.bins100ms()[10]).isEqualTo(1);
        assertThat(s.bins100ms()[50]).isEqualTo(1);
        assertThat(java.util.Arrays.stream(s.bins100ms()).sum()).isEqualTo(4);
    }

    @Test
    void twoReconnectsExactlyOneSecondApartAreNotInTheSameSecond() {
        ReconnectStats s = ReconnectStats.of(T, new long[] {T, T + 1_000 * MS});

        assertThat(s.maxInAnySecond()).isEqualTo(1);
        assertThat(s.maxShare()).isEqualTo(0.5);
    }

    @Test
    void nobodyReconnectingGivesNoSpreadAndNoShare() {
        ReconnectStats s = ReconnectStats.of(T, new long[] {ClientRecord.NONE, ClientRecord.NONE});

        assertThat(s.reconnected()).isZero();
        assertThat(s.firstMs()).isEqualTo(-1);
        assertThat(s.spreadMs()).isZero();
        assertThat(s.maxShare()).isZero();
        assertThat(s.bins100ms()).isEmpty();
    }

    @Test
    void aClientConnectedBeforeTheTriggerIsNotCountedByTheCaller() {
        // firstConnectAfter(trigger) only returns moments at or after the trigger: offset 0 is the earliest
        ReconnectStats s = ReconnectStats.of(T, new long[] {T, T + 10 * MS});

        assertThat(s.firstMs()).isZero();
        assertThat(s.bins100ms()).containsExactly(2);
    }
}
