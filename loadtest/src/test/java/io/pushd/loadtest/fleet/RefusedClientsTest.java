package io.pushd.loadtest.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.loadtest.Deadline;
import io.pushd.loadtest.auth.TokenMode;
import io.pushd.loadtest.auth.Tokens;
import io.pushd.loadtest.report.Check;
import io.pushd.loadtest.report.Report;
import io.pushd.loadtest.server.ManagedServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import io.pushd.client.Transport;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A client whose token the server refuses (401) would be retried by the client library forever;
 * the fleet reports it as not connected, with the status, as soon as every other client is in,
 * rather than waiting out the connect timeout. Over either transport: a WebSocket handshake and
 * an SSE request are refused alike.
 */
class RefusedClientsTest {

    @TempDir
    Path logDir;

    @ParameterizedTest
    @EnumSource(Transport.class)
    @Timeout(60)
    void clientsWithoutAValidTokenAreReportedAsRefusedWithoutWaitingOutTheTimeout(Transport transport) throws Exception {
        Path jar = Path.of(System.getProperty("push.server.jar", "../server/target/push-server.jar"));
        Deadline deadline = Deadline.in(Duration.ofSeconds(55));
        List<String> topics = List.of("refused-0");
        FleetSpec spec = new FleetSpec(4, 1, List.of(), 1, 100);
        try (Tokens tokens = Tokens.create(TokenMode.hs256, Duration.ofHours(1));
             Tokens otherKey = Tokens.create(TokenMode.hs256, Duration.ofHours(1));
             ManagedServer server = ManagedServer.start(jar, null, logDir, withoutWarmUps(tokens.serverSets()),
                     deadline)) {
            String[] valid = tokens.forClients(4, topics);
            String[] given = {valid[0], valid[1], otherKey.forClients(1, topics)[0], null}; // unknown key; none
            long t0 = System.nanoTime();
            ClientFleet.Customizer withTokens = Tokens.clientTokens(given);
            try (ClientFleet fleet = ClientFleet.start(spec, server.host(), server.port(), topics, deadline,
                    (i, b) -> withTokens.apply(i, b.transport(transport)))) {
                Report report = new Report("test", "refused clients", "-");
                ClientFleet.Connected c = fleet.awaitConnected(t0, Duration.ofSeconds(45), deadline, 1, report,
                        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                        "all clients connected", "clients", "topics");
                double seconds = (System.nanoTime() - t0) / 1e9;

                assertThat(fleet.records()).allMatch(r -> r.client().options().transport() == transport);
                assertThat(c.all()).isFalse();
                assertThat(c.notConnected()).extracting(ClientRecord::index).containsExactlyInAnyOrder(2, 3);
                assertThat(c.notConnected()).extracting(ClientRecord::refusedStatus).containsOnly(401);
                assertThat(fleet.records().get(0).subscribed()).isTrue();
                assertThat(fleet.records().get(1).subscribed()).isTrue();
                assertThat(seconds).as("reported at once, not after the 45 s timeout").isLessThan(20);
                Check check = report.checks().get(0);
                assertThat(check.passed()).isFalse();
                assertThat(check.detail()).startsWith("2/4 within").contains("2 refused by the server (401: 2)");
            }
        }
    }

    /** The warm-ups are not what this tests (5-7 s a start). */
    private static List<String> withoutWarmUps(List<String> sets) {
        List<String> all = new java.util.ArrayList<>(sets);
        all.add("fanout.warmup=false");
        all.add("store.replayWarmup=false");
        return all;
    }
}
