package io.pushd.server.admission;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.config.ServerConfig;
import io.pushd.server.lifecycle.RetryHints;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The start-up ramp's window opens at the first upgrade after the start, on a clock the test moves. */
class StartupRampWindowTest {

    private static final long MS = 1_000_000L;

    final AtomicLong now = new AtomicLong(1_000_000 * MS);
    final AdmissionControl admission = new AdmissionControl(ServerConfig.defaults().limits(),
            new RetryHints(Duration.ofSeconds(5), 2000), now::get);

    /** {@code n} upgrades evenly over {@code millis} from the current time; returns how many got in. */
    private int herd(int n, long millis) {
        int admitted = 0;
        for (int i = 0; i < n; i++) {
            if (admission.admit("10.0.0." + (i % 200)).admitted()) {
                admitted++;
            }
            now.addAndGet(millis * MS / n);
        }
        return admitted;
    }

    @Test
    void aHerdArrivingLateInTheWindowIsStillSpreadOverAWholeWindow() {
        admission.startRamp(200, 5_000); // 200 clients over 5 s, with 25 % slack: 50/s, at most 5 at once
        now.addAndGet(4_000 * MS); // the server was ready late: the first client comes 4 s after the start
        int admitted = herd(200, 2_000);
        // 2 s of a window opened by the first client: 5 + 2 × 50; a window from the start had ended after 1 s
        assertThat(admitted).isBetween(90, 5 + 100 + 1);
    }

    @Test
    void theRampEndsOnceEveryExpectedClientIsIn() {
        admission.startRamp(200, 5_000);
        assertThat(herd(200, 10_000)).isEqualTo(200); // 20/s: below the ramp's 50/s, nobody refused
        assertThat(herd(100, 10)).as("a burst after the herd is back").isEqualTo(100);
    }

    @Test
    void aRampStillShortOfItsClientsOutlastsItsWindowUntilAMinuteAfterItOpened() {
        admission.startRamp(200, 5_000);
        herd(1, 0);
        now.addAndGet(5_001 * MS);
        assertThat(herd(100, 10)).as("199 clients still to come: still ramped").isBetween(1, 5 + 1);
        now.addAndGet(AdmissionControl.RAMP_ARMED_FOR_MILLIS * MS);
        assertThat(herd(100, 10)).isEqualTo(100);
    }

    @Test
    void aHerdStillComingAfterTheWindowIsSpreadLikeTheRestAndEveryoneGetsIn() {
        // The single-node restart that failed: half the clients come at once, the other half
        // (their reconnects failed while the server was down, so they backed off) just after
        // the window, and every refused one comes back when its hint says.
        admission.startRamp(1_000, 5_000); // 250/s, at most 25 at once
        ThreadLocalRandom random = ThreadLocalRandom.current();
        PriorityQueue<long[]> attempts = new PriorityQueue<>(Comparator.comparingLong(a -> a[0]));
        long start = now.get();
        for (int i = 0; i < 1_000; i++) {
            long at = i < 500 ? random.nextLong(1_000) : 5_000 + random.nextLong(1_000);
            attempts.add(new long[] {start + at * MS, i});
        }
        List<Long> admittedAt = new ArrayList<>();
        while (!attempts.isEmpty()) {
            long[] a = attempts.poll();
            now.set(Math.max(now.get(), a[0]));
            AdmissionControl.Decision d = admission.admit("10.0.0." + (a[1] % 200));
            if (d.admitted()) {
                admittedAt.add((now.get() - start) / MS);
            } else {
                assertThat(d.limit()).isEqualTo(AdmissionControl.Limit.STARTUP_RAMP);
                attempts.add(new long[] {now.get() + d.retryMs() * MS, a[1]});
            }
        }
        assertThat(admittedAt).hasSize(1_000);
        int most = 0;
        for (int i = 0, j = 0; j < admittedAt.size(); j++) { // admittedAt is in time order
            while (admittedAt.get(j) - admittedAt.get(i) >= 1_000) {
                i++;
            }
            most = Math.max(most, j - i + 1);
        }
        assertThat(most).as("most admitted in any 1 s").isLessThanOrEqualTo(250 + 25 + 1);
    }

    @Test
    void clientsThatComeAndGoDoNotEndTheRampForThoseStillAway() {
        admission.startRamp(200, 5_000);
        for (int i = 0; i < 300; i++) { // a reconnect loop: 300 admissions, never more than one open
            assertThat(admission.admit("10.0.0.1").admitted()).isTrue();
            admission.release("10.0.0.1");
            now.addAndGet(40 * MS);
        }
        assertThat(herd(100, 10)).as("200 still away: still ramped").isBetween(1, 5 + 1);
    }

    @Test
    void theRampSaysHowManyConnectionsItStillExpectsUntilItEnds() {
        assertThat(admission.rampExpected()).isZero();
        admission.startRamp(200, 5_000);
        assertThat(admission.rampExpected()).as("armed").isEqualTo(200);
        herd(1, 0);
        assertThat(admission.rampExpected()).as("open").isEqualTo(200);
        now.addAndGet(1_000 * MS);
        herd(199, 10_000);
        assertThat(admission.rampExpected()).as("everyone back").isZero();
    }

    @Test
    void aRampThatNoClientOpensStopsExpectingAnyoneOnceItsTimeIsUpEvenWithNoUpgrade() {
        admission.startRamp(200, 5_000);
        now.addAndGet((AdmissionControl.RAMP_ARMED_FOR_MILLIS + 1) * MS);
        assertThat(admission.rampExpected()).isZero();
    }

    @Test
    void aRampThatNoClientOpensLapses() {
        admission.startRamp(200, 5_000);
        now.addAndGet((AdmissionControl.RAMP_ARMED_FOR_MILLIS + 1) * MS);
        assertThat(herd(100, 10)).isEqualTo(100);
        assertThat(admission.rampExpected()).isZero();
    }

    @Test
    void aRefusedUpgradeGetsTheStartUpRampAndAHintWithinTheWindow() {
        admission.startRamp(200, 5_000);
        herd(5, 0);
        AdmissionControl.Decision d = admission.admit("10.0.0.9");
        assertThat(d.admitted()).isFalse();
        assertThat(d.limit()).isEqualTo(AdmissionControl.Limit.STARTUP_RAMP);
        assertThat(d.retryMs()).isBetween(0L, 5_000L);
    }

    @Test
    void refusedClientsAreHintedWithinTheTimeTheClientsStillAwayNeedAtTheRampsRate() {
        admission.startRamp(200, 5_000); // 50/s
        herd(5, 0);
        for (int i = 0; i < 200; i++) {
            assertThat(admission.admit("10.0.1." + (i % 200)).retryMs()).as("195 to come at 50/s")
                    .isBetween(0L, 3_900L);
        }
        now.addAndGet(1_000 * MS);
        assertThat(herd(175, 7_000)).isEqualTo(175); // 25/s, below the rate: 180 in
        now.addAndGet(1_000 * MS); // the bucket full
        assertThat(herd(5, 0)).isEqualTo(5); // 185 open: 15 to come, 300 ms at 50/s
        long longest = 0;
        for (int i = 0; i < 200; i++) {
            AdmissionControl.Decision d = admission.admit("10.0.2." + (i % 200));
            assertThat(d.limit()).isEqualTo(AdmissionControl.Limit.STARTUP_RAMP);
            assertThat(d.retryMs()).as("the shortest span").isBetween(0L, AdmissionControl.RAMP_MIN_HINT_MILLIS);
            longest = Math.max(longest, d.retryMs());
        }
        assertThat(longest).as("a second, not the 300 ms the rest need").isGreaterThan(300);
    }
}
