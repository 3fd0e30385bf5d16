package io.pushd.server.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.pushd.protocol.CloseCode;
import io.pushd.server.metrics.ServerMetrics;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The closing handshake rules on an EmbeddedChannel: one close frame each way, then the channel closes. */
class WebSocketCloseTest {

    final ServerMetrics metrics = new ServerMetrics();
    final EmbeddedChannel channel = new EmbeddedChannel(new InboundFrameHandler(3, metrics));

    @AfterEach
    void finish() {
        channel.finishAndReleaseAll();
    }

    private static CloseWebSocketFrame closeWithBody(int code, byte[] reason) {
        ByteBuf body = Unpooled.buffer().writeShort(code).writeBytes(reason);
        return new CloseWebSocketFrame(true, 0, body);
    }

    /** The one close frame written; fails if there is none or more than one. */
    private CloseWebSocketFrame onlyCloseWritten() {
        channel.runPendingTasks();
        Object out = channel.readOutbound();
        assertThat(out).isInstanceOf(CloseWebSocketFrame.class);
        assertThat((Object) channel.readOutbound()).as("one frame only").isNull();
        return (CloseWebSocketFrame) out;
    }

    @ParameterizedTest
    @ValueSource(ints = {1000, 1001, 1011, 3000, 4999})
    void aValidCloseFromThePeerIsEchoedWithItsCodeAndTheChannelCloses(int code) {
        CloseWebSocketFrame in = closeWithBody(code, "see you".getBytes(StandardCharsets.UTF_8));
        channel.writeInbound(in);

        assertThat(in.refCnt()).isZero();
        CloseWebSocketFrame echo = onlyCloseWritten();
        assertThat(echo.statusCode()).isEqualTo(code);
        echo.release();
        assertThat(channel.isOpen()).isFalse();
        assertThat((Object) channel.readInbound()).as("the close is not passed on").isNull();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535})
    void anInvalidCodeFromThePeerIsAnsweredWith1002(int code) {
        channel.writeInbound(closeWithBody(code, new byte[0]));

        CloseWebSocketFrame answer = onlyCloseWritten();
        assertThat(answer.statusCode()).isEqualTo(CloseCode.PROTOCOL_ERROR.code());
        assertThat(answer.reasonText()).isEqualTo("invalid close code " + code);
        answer.release();
        assertThat(channel.isOpen()).isFalse();
    }

    @Test
    void aOneByteCloseBodyIsAnsweredWith1002() {
        channel.writeInbound(new CloseWebSocketFrame(true, 0, Unpooled.wrappedBuffer(new byte[] {3})));

        CloseWebSocketFrame answer = onlyCloseWritten();
        assertThat(answer.statusCode()).isEqualTo(CloseCode.PROTOCOL_ERROR.code());
        answer.release();
    }

    @Test
    void aReasonThatIsNotUtf8IsAnsweredWith1007() {
        channel.writeInbound(closeWithBody(1000, new byte[] {'o', 'k', (byte) 0xed, (byte) 0xa0, (byte) 0x80}));

        CloseWebSocketFrame answer = onlyCloseWritten();
        assertThat(answer.statusCode()).isEqualTo(CloseCode.INVALID_PAYLOAD.code());
        answer.release();
    }

    @Test
    void anEmptyCloseIsAnsweredWithAnEmptyClose() {
        channel.writeInbound(new CloseWebSocketFrame(true, 0, Unpooled.EMPTY_BUFFER));

        CloseWebSocketFrame answer = onlyCloseWritten();
        assertThat(answer.content().readableBytes()).isZero();
        answer.release();
    }

    @Test
    void theServersCloseIsSentOnceAndThePeersAnswerEndsTheConnection() {
        WebSocketClose.close(channel, CloseCode.UNSUPPORTED_DATA, "binary frames are not supported", metrics);
        WebSocketClose.close(channel, CloseCode.INTERNAL_ERROR, "a second reason", metrics);

        CloseWebSocketFrame ours = onlyCloseWritten();
        assertThat(ours.statusCode()).isEqualTo(CloseCode.UNSUPPORTED_DATA.code());
        ours.release();
        assertThat(channel.isOpen()).as("waits for the peer's answer").isTrue();

        CloseWebSocketFrame answer = new CloseWebSocketFrame(1003, "");
        channel.writeInbound(answer);

        assertThat(answer.refCnt()).isZero();
        assertThat((Object) channel.readOutbound()).as("the answer is not echoed").isNull();
        assertThat(channel.isOpen()).isFalse();
        assertThat(metrics.scrape()).contains("push_closes_sent_total{code=\"1003\"} 1.0")
                .contains("push_closes_sent_total{code=\"1011\"} 0.0");
    }

    @Test
    void afterTheServersCloseNothingThePeerSendsIsPassedOn() {
        WebSocketClose.close(channel, CloseCode.SERVICE_RESTART, CloseCode.retryReason(100), metrics);
        onlyCloseWritten().release();

        PingWebSocketFrame ping = new PingWebSocketFrame(Unpooled.wrappedBuffer(new byte[] {1}));
        TextWebSocketFrame text = new TextWebSocketFrame("{}");
        channel.writeInbound(ping, text);

        assertThat(ping.refCnt()).isZero();
        assertThat(text.refCnt()).isZero();
        assertThat((Object) channel.readInbound()).isNull();
        assertThat((Object) channel.readOutbound()).isNull();
    }

    @Test
    void pingsOverTheInboundLimitCloseWith1008() {
        for (int i = 0; i < 10; i++) {
            channel.writeInbound(new PingWebSocketFrame(Unpooled.wrappedBuffer(new byte[] {(byte) i})));
        }

        int passedOn = 0;
        Object in;
        while ((in = channel.readInbound()) != null) {
            passedOn++;
            io.netty.util.ReferenceCountUtil.release(in);
        }
        assertThat(passedOn).as("the first 3 reach the protocol handler").isEqualTo(3);
        CloseWebSocketFrame close = onlyCloseWritten();
        assertThat(close.statusCode()).isEqualTo(CloseCode.POLICY_VIOLATION.code());
        assertThat(close.reasonText()).isEqualTo("more than 3 frames per second");
        close.release();
    }
}
