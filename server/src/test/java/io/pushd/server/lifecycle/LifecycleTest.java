package io.pushd.server.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LifecycleTest {

    final Lifecycle lifecycle = new Lifecycle();

    @Test
    void aServerStartsNeitherReadyNorServing() {
        assertThat(lifecycle.state()).isEqualTo(ServerState.STARTING);
        assertThat(lifecycle.isReady()).isFalse();
        assertThat(lifecycle.isServing()).isFalse();
    }

    @Test
    void drainingStillServesButIsNotReadyAndClosingRefusesNewWork() {
        assertThat(lifecycle.advanceTo(ServerState.READY)).isTrue();
        assertThat(lifecycle.isReady()).isTrue();
        assertThat(lifecycle.isServing()).isTrue();

        assertThat(lifecycle.advanceTo(ServerState.DRAINING)).isTrue();
        assertThat(lifecycle.isReady()).as("the balancer takes the instance out").isFalse();
        assertThat(lifecycle.isServing()).as("what still arrives during the grace is served").isTrue();

        assertThat(lifecycle.advanceTo(ServerState.CLOSING)).isTrue();
        assertThat(lifecycle.isServing()).isFalse();
        assertThat(lifecycle.advanceTo(ServerState.STOPPED)).isTrue();
        assertThat(lifecycle.isServing()).isFalse();
    }

    @Test
    void aStateNeverGoesBack() {
        lifecycle.advanceTo(ServerState.CLOSING); // skipping states forward is allowed
        assertThat(lifecycle.advanceTo(ServerState.DRAINING)).isFalse();
        assertThat(lifecycle.advanceTo(ServerState.READY)).isFalse();
        assertThat(lifecycle.advanceTo(ServerState.CLOSING)).as("already there").isFalse();
        assertThat(lifecycle.state()).isEqualTo(ServerState.CLOSING);
        lifecycle.advanceTo(ServerState.STOPPED);
        for (ServerState s : ServerState.values()) {
            assertThat(lifecycle.advanceTo(s)).as("nothing leaves STOPPED: " + s).isFalse();
        }
        assertThat(lifecycle.state()).isEqualTo(ServerState.STOPPED);
    }

    @Test
    void readinessReportsClosingAsDrainingAsItAlwaysDid() {
        assertThat(ServerState.DRAINING.readinessName()).isEqualTo("draining");
        assertThat(ServerState.CLOSING.readinessName()).isEqualTo("draining");
        assertThat(ServerState.STOPPED.readinessName()).isEqualTo("stopped");
        assertThat(ServerState.STARTING.readinessName()).isEqualTo("starting");
    }
}
