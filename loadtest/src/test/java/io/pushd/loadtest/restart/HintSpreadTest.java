package io.pushd.loadtest.restart;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class HintSpreadTest {

    @Test
    void hintsAreCountedPerOneSecondSlice() {
        HintSpread s = HintSpread.of(List.of(100L, 900L, 1_500L, 2_999L));

        assertThat(s.count()).isEqualTo(4);
        assertThat(s.maxMs()).isEqualTo(2_999);
        assertThat(s.perSecond()).containsExactly(2, 1, 1);
        assertThat(s.slices()).isEqualTo("[0,1) s: 50.0 %, [1,2) s: 25.0 %, [2,3) s: 25.0 %");
    }

    @Test
    void aHintOfExactlyOneSecondIsInTheSecondSlice() {
        assertThat(HintSpread.of(List.of(0L, 1_000L)).perSecond()).containsExactly(1, 1);
    }

    @Test
    void emptySecondsInBetweenAreShownAsZero() {
        assertThat(HintSpread.of(List.of(0L, 2_500L)).slices())
                .isEqualTo("[0,1) s: 50.0 %, [1,2) s: 0.0 %, [2,3) s: 50.0 %");
    }

    @Test
    void noHintsGiveNoSlices() {
        HintSpread s = HintSpread.of(List.of());

        assertThat(s.count()).isZero();
        assertThat(s.perSecond()).isEmpty();
        assertThat(s.slices()).isEmpty();
    }
}
