package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.protocol.CloseCode;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** After a start, the previous run's clients are admitted gradually, also when no hint reached them. */
class StartupRampTest {

    @TempDir
    Path dataDir;
    PushServer server;
    final List<WsClient> clients = new ArrayList<>();

    @AfterEach
    void stop() {
        clients.forEach(WsClient::close);
        if (server != null) {
            server.close();
        }
    }

    private List<WsClient> connectAll(int n) throws Exception {
        List<WsClient> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            WsClient c = WsClient.connect(server.port(), "topic=t");
            clients.add(c);
            batch.add(c);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (batch.stream().filter(w -> !w.messages.isEmpty() || w.closeCode.isDone()).count() < n
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return batch;
    }

    @Test
    void aStartingServerAdmitsThePreviousRunsClientsNoFasterThanAnEvenSpreadAndHintsTheRest() throws Exception {
        Files.writeString(dataDir.resolve("connections"), "200"); // the previous run had 200 clients
        server = TestServers.start(dataDir);
        long t0 = System.nanoTime();
        List<WsClient> herd = connectAll(60);
        double seconds = (System.nanoTime() - t0) / 1e9;
        List<WsClient> admitted = herd.stream().filter(w -> !w.messages.isEmpty()).toList();
        // 200 clients over the 5 s window, with 25 % slack: 50/s, at most 5 at once
        assertThat((double) admitted.size()).isLessThanOrEqualTo(5 + 50 * seconds + 1);
        assertThat(admitted).isNotEmpty();
        for (WsClient refused : herd.stream().filter(w -> w.messages.isEmpty()).toList()) {
            assertThat(refused.awaitClose(Duration.ofSeconds(5))).isEqualTo(CloseCode.TRY_AGAIN_LATER.code());
            assertThat(CloseCode.parseRetryMs(refused.closeReason())).isPresent();
            assertThat(CloseCode.parseRetryMs(refused.closeReason()).getAsLong()).isBetween(0L, 5_000L);
        }
        String scrape = Http.get(server.port(), "/metrics").body();
        assertThat(scrape).containsPattern(
                "push_handshakes_total\\{outcome=\"refused_startup_ramp\",transport=\"websocket\"} [1-9]");
    }

    @Test
    void aHerdThatComesAfterTheWindowWouldHaveEndedIsStillRamped() throws Exception {
        Files.writeString(dataDir.resolve("connections"), "200");
        server = TestServers.start(dataDir);
        Thread.sleep(5_500); // past a 5 s window counted from the start: the herd of a server that was ready late
        List<WsClient> herd = connectAll(60);
        List<WsClient> refused = herd.stream().filter(w -> w.messages.isEmpty()).toList();
        assertThat(refused).isNotEmpty();
        assertThat(refused.get(0).awaitClose(Duration.ofSeconds(5))).isEqualTo(CloseCode.TRY_AGAIN_LATER.code());
    }

    @Test
    void withoutTheRampEveryoneIsAdmittedAtOnce() throws Exception {
        Files.writeString(dataDir.resolve("connections"), "200");
        ServerConfig c = TestServers.config(dataDir);
        server = TestServers.start(c.withReconnect(new ServerConfig.Reconnect(2000, false)));
        assertThat(connectAll(60)).allSatisfy(w -> assertThat(w.messages).isNotEmpty());
    }

    @Test
    void aFewReturningClientsAreNotRamped() throws Exception {
        Files.writeString(dataDir.resolve("connections"), "50");
        server = TestServers.start(dataDir);
        assertThat(connectAll(50)).allSatisfy(w -> assertThat(w.messages).isNotEmpty());
    }

    @Test
    void whileTheRampWaitsTheCountKeptForTheNextStartIsStillThePreviousRuns() throws Exception {
        Files.writeString(dataDir.resolve("connections"), "200");
        server = TestServers.start(dataDir);
        connectAll(3); // 3 of 200 back, then a crash: the next start must still expect 200
        Thread.sleep(2_500); // past the checkpoint's refresh (every 2 s)
        assertThat(Files.readString(dataDir.resolve("connections")).trim()).isEqualTo("200");
    }

    @Test
    void aDrainRecordsHowManyClientsToExpectBack() throws Exception {
        server = TestServers.start(dataDir);
        for (int i = 0; i < 3; i++) {
            WsClient c = WsClient.connect(server.port(), "topic=t");
            clients.add(c);
            c.next();
        }
        server.drain();
        assertThat(Files.readString(dataDir.resolve("connections")).trim()).isEqualTo("3");
    }
}
