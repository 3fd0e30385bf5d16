package io.pushd.server.admission;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.config.ServerConfig;
import io.pushd.server.lifecycle.RetryHints;
import java.time.Duration;
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
    void theWindowEndsAWindowAfterTheFirstUpgrade() {
        admission.startRamp(200, 5_000);
        now.addAndGet(10_000 * MS);
        herd(1, 0);
        now.addAndGet(5_001 * MS);
        assertThat(herd(100, 10)).isEqualTo(100);
    }

    @Test
    void aRampThatNoClientOpensLapses() {
        admission.startRamp(200, 5_000);
        now.addAndGet((AdmissionControl.RAMP_ARMED_FOR_MILLIS + 1) * MS);
        assertThat(herd(100, 10)).isEqualTo(100);
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
}
