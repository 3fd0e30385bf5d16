package io.pushd.server.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class ReturnPlanTest {

    /** drain.minWindow 5 s, reconnect.targetRate 200/s: 1,000 clients need 5 s, 4,000 need 20 s. */
    final RetryHints hints = new RetryHints(Duration.ofSeconds(5), 200);
    final Lifecycle lifecycle = new Lifecycle();
    final AtomicLong now = new AtomicLong(1_000_000_000L);
    final ReturnPlan plan = new ReturnPlan(lifecycle, hints, now::get);

    @Test
    void aClientArrivingDuringTheWarmUpsIsSentPastTheirExpectedEndWithinTheWindowForTheClientsExpected() {
        plan.listening(6_000, 4_000);
        now.addAndGet(Duration.ofMillis(1_000).toNanos()); // a second into the warm-ups
        List<Long> drawn = draw(2_000);
        assertThat(drawn).allSatisfy(h -> assertThat(h).isBetween(5_000L, 5_000L + 20_000));
        // spread over the whole window, not bunched: each quarter of it gets about a quarter
        for (int q = 0; q < 4; q++) {
            long from = 5_000 + q * 5_000L;
            assertThat(drawn.stream().filter(h -> h >= from && h < from + 5_000).count())
                    .as("hints in [%d, %d) ms", from, from + 5_000).isBetween(400L, 600L);
        }
    }

    @Test
    void aStartThatRunsPastItsEstimateIsTakenToBeTwoThirdsDoneSoClientsAreSentBackLaterTheLongerItRuns() {
        plan.listening(2_000, 1_000); // window 5 s
        now.addAndGet(Duration.ofMillis(1_600).toNanos()); // 0.4 s left, half of 1.6 s is 0.8: the floor
        assertThat(draw(1_000)).allSatisfy(h -> assertThat(h)
                .isBetween(ReturnPlan.MIN_STARTING_MILLIS, ReturnPlan.MIN_STARTING_MILLIS + 5_000));
        now.addAndGet(Duration.ofMillis(900).toNanos()); // 2.5 s in: 1.25 s more
        assertThat(draw(1_000)).allSatisfy(h -> assertThat(h).isBetween(1_250L, 6_250L));
        now.addAndGet(Duration.ofMillis(9_500).toNanos()); // 12 s in: 6 s more
        assertThat(draw(1_000)).allSatisfy(h -> assertThat(h).isBetween(6_000L, 11_000L));
    }

    @Test
    void anAbsurdEstimateOrAnEndlessStartSendsClientsAtMostAMinuteOn() {
        plan.listening(3_600_000, 1_000); // a damaged warmup-ms file: an hour
        assertThat(draw(1_000)).allSatisfy(h -> assertThat(h)
                .isBetween(ReturnPlan.MAX_STARTING_MILLIS, ReturnPlan.MAX_STARTING_MILLIS + 5_000));
        now.addAndGet(Duration.ofMinutes(10).toNanos()); // a start that has run ten minutes
        assertThat(draw(1_000)).allSatisfy(h -> assertThat(h)
                .isBetween(ReturnPlan.MAX_STARTING_MILLIS, ReturnPlan.MAX_STARTING_MILLIS + 5_000));
    }

    @Test
    void withoutAnEstimateTheStartIsTakenToBeOverAndTheWindowIsTheSmallest() {
        assertThat(draw(1_000)).allSatisfy(h -> assertThat(h)
                .isBetween(ReturnPlan.MIN_STARTING_MILLIS, ReturnPlan.MIN_STARTING_MILLIS + 5_000));
    }

    @Test
    void aClientArrivingDuringTheDrainIsSentPastTheRestartTheDrainPlansFor() {
        lifecycle.advanceTo(ServerState.READY);
        plan.afterDrain(14_000);
        lifecycle.advanceTo(ServerState.CLOSING);
        assertThat(plan.afterDrainMillis()).isEqualTo(14_000);
        assertThat(draw(1_000)).allSatisfy(h -> assertThat(h).isBetween(14_000L, 19_000L));
    }

    @Test
    void aClusterNodesDrainSendsClientsBackWithinTheSmallestWindowFromNow() {
        lifecycle.advanceTo(ServerState.CLOSING);
        plan.afterDrain(0);
        assertThat(draw(1_000)).allSatisfy(h -> assertThat(h).isBetween(0L, 5_000L));
        assertThat(java.util.Collections.max(draw(1_000))).as("the whole window is used").isGreaterThan(4_000);
    }

    private List<Long> draw(int n) {
        return LongStream.generate(plan::hint).limit(n).boxed().toList();
    }
}
