package io.pushd.server;

import io.pushd.server.config.Limits;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.pushd.protocol.CloseCode;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.RawWebSocket;
import io.pushd.server.testing.RawWebSocket.End;
import io.pushd.server.testing.RawWebSocket.Transcript;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import io.pushd.server.testing.WsFrame;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.slf4j.LoggerFactory;

/**
 * The closing handshake (RFC 6455 sections 5.5.1, 7.4) over a real socket, frame by frame: exactly
 * one close frame per connection with the right code, and the TCP connection then ends with a FIN,
 * never a reset that could overtake the close frame. Mirrors Autobahn cases 7.3, 7.5.1 and 7.9.x.
 */
class CloseHandshakeTest {

    private static final long READ_TIMEOUT_MS = 10_000;

    @TempDir
    static Path sharedDir;
    static PushServer shared;
    static final ListAppender<ILoggingEvent> logs = new ListAppender<>();

    @TempDir
    Path ownDir;
    PushServer own;

    @BeforeAll
    static void startSharedServer() throws Exception {
        shared = TestServers.start(sharedDir);
        logs.start();
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(logs);
    }

    @AfterAll
    static void stopSharedServer() {
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
        shared.close();
    }

    @BeforeEach
    void clearLogs() {
        logs.list.clear();
    }

    @AfterEach
    void nothingAClientDidWasLoggedAsAWarning() {
        if (own != null) {
            own.close();
        }
        assertThat(warnings()).as("client misbehaviour is DEBUG, never WARN").isEmpty();
    }

    private static List<String> warnings() {
        synchronized (logs) {
            return List.copyOf(logs.list).stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
                    .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage()).toList();
        }
    }

    private PushServer own(UnaryOperator<ServerConfig> tweak) throws Exception {
        own = TestServers.start(tweak.apply(TestServers.config(ownDir)));
        return own;
    }

    private static RawWebSocket open(PushServer server) throws Exception {
        return RawWebSocket.open(server.port(), "topic=t", 64 * 1024);
    }

    /** Sends the frames, then reads (answering the server's close) until the connection ends. */
    private static Transcript exchange(PushServer server, WsFrame... frames) throws Exception {
        try (RawWebSocket ws = open(server)) {
            for (WsFrame f : frames) {
                ws.send(f);
            }
            return ws.readUntilEnd(READ_TIMEOUT_MS, true);
        }
    }

    private static void assertOneClose(Transcript t, int code) {
        assertThat(t.closes()).as("close frames received: %s", t.frames()).hasSize(1);
        assertThat(t.closes().get(0).closeCode()).as("%s", t.frames()).isEqualTo(code);
        assertThat(t.end()).as("the server closed the connection with a FIN").isEqualTo(End.EOF);
    }

    @ParameterizedTest(name = "client close {0} is answered with {1}")
    @CsvSource({
        // valid codes (section 7.4.1, IANA registry, 3000-4999): echoed once
        "1000, 1000", "1001, 1001", "1002, 1002", "1003, 1003", "1007, 1007", "1008, 1008", "1009, 1009",
        "1010, 1010", "1011, 1011", "1012, 1012", "1013, 1013", "1014, 1014", "3000, 3000", "3999, 3999",
        "4000, 4000", "4999, 4999",
        // never valid on the wire (Autobahn 7.9.1-7.9.9 and the ranges around them): 1002
        "0, 1002", "999, 1002", "1004, 1002", "1005, 1002", "1006, 1002", "1015, 1002", "1016, 1002",
        "1100, 1002", "2000, 1002", "2999, 1002", "5000, 1002", "32768, 1002", "65535, 1002",
    })
    void everyCloseCodeFromTheClientGetsExactlyOneCloseBack(int sent, int expected) throws Exception {
        Transcript t = exchange(shared, WsFrame.close(sent, "client says bye"));

        assertOneClose(t, expected);
    }

    @Test
    void aCloseWithoutABodyIsAnsweredWithOneEmptyClose() throws Exception {
        Transcript t = exchange(shared, WsFrame.closeBody(new byte[0]));

        assertOneClose(t, -1);
    }

    @Test
    void aCloseWithAOneBytePayloadIsAProtocolError() throws Exception {
        Transcript t = exchange(shared, WsFrame.closeBody(new byte[] {0x03}));

        assertOneClose(t, CloseCode.PROTOCOL_ERROR.code());
    }

    @Test
    void aCloseReasonThatIsNotUtf8IsAnsweredWith1007() throws Exception {
        // Autobahn 7.5.1: "κόσμε", then an encoded surrogate (ED A0 80), then "edited"
        byte[] reason = {(byte) 0xce, (byte) 0xba, (byte) 0xe1, (byte) 0xbd, (byte) 0xb9, (byte) 0xcf, (byte) 0x83,
            (byte) 0xce, (byte) 0xbc, (byte) 0xce, (byte) 0xb5, (byte) 0xed, (byte) 0xa0, (byte) 0x80, 0x65, 0x64,
            0x69, 0x74, 0x65, 0x64};

        Transcript t = exchange(shared, WsFrame.close(1000, reason));

        assertOneClose(t, CloseCode.INVALID_PAYLOAD.code());
    }

    @Test
    void aBinaryFrameGetsOne1003AndTheAnswerIsNotEchoed() throws Exception {
        Transcript t = exchange(shared, WsFrame.binary(new byte[] {1, 2, 3}));

        assertOneClose(t, CloseCode.UNSUPPORTED_DATA.code());
        assertThat(t.closes().get(0).closeReason()).isEqualTo("binary frames are not supported");
    }

    @Test
    void aFrameOverTheLimitGetsOne1009() throws Exception {
        Transcript t = exchange(shared, WsFrame.text("x".repeat(70 * 1024)));

        assertOneClose(t, CloseCode.MESSAGE_TOO_BIG.code());
    }

    @Test
    void aFragmentedMessageOverTheLimitGetsOne1009() throws Exception {
        byte[] half = "y".repeat(40 * 1024).getBytes(StandardCharsets.US_ASCII);

        Transcript t = exchange(shared, new WsFrame(false, 0, WsFrame.TEXT, half),
                new WsFrame(true, 0, WsFrame.CONTINUATION, half));

        assertOneClose(t, CloseCode.MESSAGE_TOO_BIG.code());
    }

    @Test
    void theCloseForAFourMebibyteFrameReachesTheClientBeforeTheConnectionEnds() throws Exception {
        byte[] frame = WsFrame.text("z".repeat(4 * 1024 * 1024)).encode(true);
        try (RawWebSocket ws = open(shared)) {
            // the client is still sending when the server decides: the close must not be overtaken by a reset
            Thread writer = new Thread(() -> {
                try {
                    ws.sendBytes(frame);
                } catch (java.io.IOException stoppedByTheServer) {
                    // fine: only what the client receives matters
                }
            });
            writer.start();
            Transcript t = ws.readUntilEnd(READ_TIMEOUT_MS, false);
            writer.join(READ_TIMEOUT_MS);

            assertOneClose(t, CloseCode.MESSAGE_TOO_BIG.code());
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "an unmasked frame, unmasked",
        "a reserved opcode, opcode",
        "a reserved bit, rsv",
        "a continuation without a start, continuation",
        "a fragmented ping, fragmented-ping",
        "a ping over 125 bytes, long-ping",
    })
    void aProtocolViolationGetsOne1002(String what, String kind) throws Exception {
        try (RawWebSocket ws = open(shared)) {
            switch (kind) {
                case "unmasked" -> ws.sendBytes(WsFrame.text("{}").encode(false));
                case "opcode" -> ws.send(new WsFrame(true, 0, 0x3, new byte[0]));
                case "rsv" -> ws.send(new WsFrame(true, 0x4, WsFrame.TEXT, "{}".getBytes(StandardCharsets.US_ASCII)));
                case "continuation" -> ws.send(new WsFrame(true, 0, WsFrame.CONTINUATION, new byte[] {'x'}));
                case "fragmented-ping" -> ws.send(new WsFrame(false, 0, WsFrame.PING, new byte[] {'p'}));
                case "long-ping" -> ws.send(WsFrame.ping(new byte[126]));
                default -> throw new IllegalArgumentException(kind);
            }
            Transcript t = ws.readUntilEnd(READ_TIMEOUT_MS, true);

            assertOneClose(t, CloseCode.PROTOCOL_ERROR.code());
        }
    }

    @Test
    void textThatIsNotUtf8GetsOne1007() throws Exception {
        Transcript t = exchange(shared, new WsFrame(true, 0, WsFrame.TEXT, new byte[] {'{', (byte) 0xC0, (byte) 0xAF}));

        assertOneClose(t, CloseCode.INVALID_PAYLOAD.code());
    }

    @Test
    void framesAfterTheClientsCloseAreIgnored() throws Exception {
        Transcript t = exchange(shared, WsFrame.close(1000, ""), WsFrame.ping(new byte[] {'p'}),
                WsFrame.binary(new byte[] {1}));

        assertOneClose(t, 1000);
        assertThat(t.frames()).as("no pong after the close").noneMatch(f -> f.opcode() == WsFrame.PONG);
    }

    @Test
    void aFragmentFollowedByADisconnectIsNotAWarning() throws Exception {
        for (int i = 0; i < 3; i++) {
            try (RawWebSocket ws = open(shared)) {
                ws.send(new WsFrame(false, 0, WsFrame.TEXT, "{\"type\":".getBytes(StandardCharsets.US_ASCII)));
                Thread.sleep(50); // let the server take the fragment before the connection goes
            }
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (shared.liveConnections() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(shared.liveConnections()).isZero();
        Thread.sleep(100); // channelInactive runs after the count drops
        // the @AfterEach check is the assertion: no WARN for any of the three
        assertThat(warnings()).isEmpty();
    }

    @Test
    void aMessageFloodGetsOne1008() throws Exception {
        own(c -> c.withLimits(inboundLimit(c, 20)));
        try (RawWebSocket ws = open(own)) {
            for (int i = 0; i < 60; i++) {
                ws.send(WsFrame.text("{\"type\":\"unsubscribe\",\"topic\":\"nope\"}"));
            }
            assertOneClose(ws.readUntilEnd(READ_TIMEOUT_MS, true), CloseCode.POLICY_VIOLATION.code());
        }
    }

    @Test
    void pingsCountAgainstTheInboundLimitAndAreAnsweredUntilThen() throws Exception {
        own(c -> c.withLimits(inboundLimit(c, 20)));
        try (RawWebSocket ws = open(own)) {
            for (int i = 0; i < 200; i++) {
                ws.send(WsFrame.ping(new byte[] {(byte) i}));
            }
            Transcript t = ws.readUntilEnd(READ_TIMEOUT_MS, true);

            assertOneClose(t, CloseCode.POLICY_VIOLATION.code());
            List<WsFrame> pongs = t.frames().stream().filter(f -> f.opcode() == WsFrame.PONG).toList();
            assertThat(pongs).as("pings within the limit are answered").isNotEmpty().hasSizeLessThanOrEqualTo(20);
            assertThat(pongs.get(0).payload()).containsExactly(0);
            int close = t.frames().indexOf(t.closes().get(0));
            assertThat(t.frames().subList(close + 1, t.frames().size())).as("nothing after the close").isEmpty();
        }
    }

    @Test
    void aRefusedUpgradeGetsOne1013() throws Exception {
        own(c -> c.withLimits(c.limits().withMaxConnections(1)));
        try (WsClient first = WsClient.connect(own.port(), "topic=t")) {
            first.next();
            Transcript t = exchange(own);

            assertOneClose(t, CloseCode.TRY_AGAIN_LATER.code());
            assertThat(CloseCode.parseRetryMs(t.closes().get(0).closeReason())).isPresent();
        }
    }

    @Test
    void theDrainGivesEachConnectionOne1012() throws Exception {
        own(c -> c.withDrain(new ServerConfig.Drain(Duration.ZERO, Duration.ofSeconds(1), Duration.ofSeconds(10),
                false)));
        try (RawWebSocket a = open(own); RawWebSocket b = open(own)) {
            Thread drain = new Thread(own::drain);
            drain.start();
            Transcript ta = a.readUntilEnd(READ_TIMEOUT_MS, true);
            Transcript tb = b.readUntilEnd(READ_TIMEOUT_MS, true);
            drain.join(READ_TIMEOUT_MS);

            assertOneClose(ta, CloseCode.SERVICE_RESTART.code());
            assertOneClose(tb, CloseCode.SERVICE_RESTART.code());
        }
    }

    private static Limits inboundLimit(ServerConfig c, int perSecond) {
        return c.limits().toBuilder().maxInboundMessagesPerSecond(perSecond).permessageDeflate(false).build();
    }
}
