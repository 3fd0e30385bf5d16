package io.pushd.loadtest.publish;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClosedLoopTest {

    @Test
    void aPublisherPausesAfterEachFailureRatherThanHammeringAnAbsentServer() throws Exception {
        int port;
        try (ServerSocket nothing = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = nothing.getLocalPort(); // closed: connections are refused
        }
        try (TopicsApi api = new TopicsApi("127.0.0.1", port, 1, 1, Duration.ofSeconds(2))) {
            ClosedLoop loop = new ClosedLoop(api, List.of("t"), 2, n -> "{}", Long.MAX_VALUE);
            loop.start();
            Thread.sleep(1_000);
            loop.stopAndAwait(Duration.ofSeconds(5));
            // 2 publishers, a pause of 100 ms after each failure: about 20 (before: tens of thousands)
            assertThat(loop.failures()).isBetween(2L, 40L);
            assertThat(loop.firstFailure()).contains("Connection refused");
            assertThat(loop.acked()).isZero();
        }
    }
}
