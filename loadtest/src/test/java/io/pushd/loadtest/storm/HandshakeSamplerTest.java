package io.pushd.loadtest.storm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class HandshakeSamplerTest {

    @Test
    void eachSampleIncreaseGoesIntoItsBin() {
        assertThat(HandshakeSampler.bin(10, List.of(12L, 15L, 15L), 0, 100, 3)).containsExactly(2, 3, 0);
    }

    @Test
    void samplesBeyondTheLastBinGoIntoTheLastBin() {
        assertThat(HandshakeSampler.bin(10, List.of(12L, 15L, 15L, 20L), 0, 100, 3)).containsExactly(2, 3, 5);
    }

    @Test
    void samplingStartedBeforeTheTriggerCountsFromBinZero() {
        // sampling began 150 ms before the trigger: samples 0..2 start at -150, -50, 50 ms, sample 3 at 150 ms
        assertThat(HandshakeSampler.bin(0, List.of(1L, 2L, 4L, 8L), -150, 100, 2)).containsExactly(4, 4);
    }

    @Test
    void theHandshakesSinceTheLastTickAreCountedAtTheStop() {
        java.util.concurrent.atomic.AtomicLong count = new java.util.concurrent.atomic.AtomicLong(5);
        HandshakeSampler s = HandshakeSampler.start(count::get, 60_000); // no tick within this test
        long trigger = System.nanoTime();
        count.addAndGet(300);
        s.stop();
        assertThat(java.util.Arrays.stream(s.bins(trigger, 3)).sum()).isEqualTo(300);
    }

    @Test
    void thePeakIsTheFirstFullestBin() {
        assertThat(StormCommand.peakBin(new int[] {0, 3, 5, 5})).isEqualTo(2);
        assertThat(StormCommand.peakBin(new int[] {0, 0})).isZero();
    }
}
