package io.pushd.loadtest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConnectionLogTest {

    private static final Map<String, Integer> CLIENTS = Map.of("127.100.0.1", 0, "127.100.0.2", 1);

    @TempDir
    Path dir;

    @Test
    void aSubscriptionIsPlacedOnTheLastNodeNginxTriedAndBetweenItsStartAndEnd() throws Exception {
        Path log = dir.resolve("connections.log");
        Files.write(log, List.of(
                // client 0 on 8001 from t=100.000 s to t=110.000 s, then on 8002 (after 8001 refused it)
                "127.100.0.1|127.0.0.1:8001|101|110.000|10.000|/v1/live",
                "127.100.0.1|127.0.0.1:8001, 127.0.0.1:8002|101|130.500|20.000|/v1/live",
                // refused (503 from every node) and not a client: skipped
                "127.100.0.2|127.0.0.1:8003|503|111.000|0.001|/v1/live",
                "10.0.0.9|127.0.0.1:8003|101|111.000|5.000|/v1/live",
                "garbage"));

        ConnectionLog hops = ConnectionLog.read(log, a -> CLIENTS.getOrDefault(a, -1));

        assertThat(hops.lines()).isEqualTo(5);
        assertThat(hops.skipped()).isEqualTo(3);
        assertThat(hops.nodeAt(0, 105_000)).isEqualTo(8001);
        assertThat(hops.nodeAt(0, 110_200)).as("between the two connections").isEqualTo(-1);
        assertThat(hops.nodeAt(0, 111_500)).isEqualTo(8002);
        assertThat(hops.firstFrom(0, 109_000, 200_000).nodePort()).isEqualTo(8002);
        assertThat(hops.firstFrom(0, 111_600, 200_000)).isNull();
        assertThat(hops.nodeAt(1, 111_000)).as("a refused handshake is no connection").isEqualTo(-1);
    }
}
