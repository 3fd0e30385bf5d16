package io.pushd.server.pipeline;

import io.pushd.server.config.Limits;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.PrematureChannelClosureException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.compression.DecompressionException;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.pushd.protocol.ClientMessage;
import io.pushd.protocol.CloseCode;
import io.pushd.server.admission.AdmissionControl;
import io.pushd.server.admission.ClientAddress;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.lifecycle.Lifecycle;
import io.pushd.server.lifecycle.RetryHints;
import io.pushd.server.lifecycle.ServerState;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.session.SessionContext;
import io.pushd.server.session.Sessions;
import io.pushd.server.store.ChronicleEventStore;
import io.pushd.server.history.LocalSequencer;
import io.pushd.server.history.Publisher;
import io.pushd.server.topic.TopicHub;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import net.openhft.chronicle.core.time.SystemTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The rules for what a client may send, on an EmbeddedChannel: close code, reason, refCnt, finish. */
class LiveSessionHandlerTest {

    @TempDir
    Path dataDir;
    ChronicleEventStore store;
    Publisher publisher;
    EmbeddedChannel channel;
    ServerContext server;
    Lifecycle lifecycle;
    final ServerMetrics metrics = new ServerMetrics();

    @AfterEach
    void tearDown() throws Exception {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
        if (publisher != null) { // the classification tests need no server
            publisher.close();
            store.close();
        }
    }

    private EmbeddedChannel upgraded(UnaryOperator<Limits> limits) {
        return upgraded(limits, false);
    }

    /** With {@code wsHandlers}, the close and rate handlers sit before the session, as in the pipeline. */
    private EmbeddedChannel upgraded(UnaryOperator<Limits> limits, boolean wsHandlers) {
        ServerConfig d = ServerConfig.defaults();
        ServerConfig config = d.withLimits(limits.apply(d.limits()));
        store = new ChronicleEventStore(dataDir, Duration.ofHours(1), 100, Duration.ofHours(1), false,
                SystemTimeProvider.INSTANCE);
        TopicHub hub = new TopicHub(store::epoch, io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, metrics);
        publisher = new Publisher(store, new LocalSequencer(store.heads()), hub, metrics, System::currentTimeMillis, 16);
        lifecycle = new Lifecycle();
        lifecycle.advanceTo(ServerState.READY);
        RetryHints hints = new RetryHints(Duration.ofMillis(5000), config.reconnect().targetRate());
        server = new ServerContext(config, store, publisher, lifecycle, new ClientAddress(List.of()), metrics,
                new SessionContext(config.limits(), store, hub, lifecycle, hints,
                        new AdmissionControl(config.limits(), hints), new Sessions(), metrics));
        channel = wsHandlers
                ? new EmbeddedChannel(
                        new InboundFrameHandler(config.limits().maxInboundMessagesPerSecond(), metrics),
                        handler("192.0.2.1"))
                : new EmbeddedChannel(handler("192.0.2.1"));
        channel.pipeline().fireUserEventTriggered(
                new WebSocketServerProtocolHandler.HandshakeComplete("/v1/live?topic=t", new DefaultHttpHeaders(), null));
        channel.runPendingTasks();
        TextWebSocketFrame subscribed = channel.readOutbound();
        assertThat(subscribed.text()).contains("\"type\":\"subscribed\"");
        subscribed.release();
        return channel;
    }

    /** The handler as the gate builds it: an upgrade from {@code clientIp} to topic {@code t}, auth.mode none. */
    private LiveSessionHandler handler(String clientIp) {
        return new LiveSessionHandler(server, clientIp, null, List.of(new ClientMessage.Subscribe("t", null)));
    }

    private CloseWebSocketFrame closeFrame() {
        channel.runPendingTasks();
        Object out;
        while ((out = channel.readOutbound()) != null) {
            if (out instanceof CloseWebSocketFrame close) {
                return close;
            }
            io.netty.util.ReferenceCountUtil.release(out);
        }
        throw new AssertionError("no close frame written");
    }

    @Test
    void aBinaryFrameClosesWith1003AndIsReleased() {
        upgraded(l -> l);
        BinaryWebSocketFrame binary = new BinaryWebSocketFrame(Unpooled.wrappedBuffer(new byte[] {1, 2}));
        channel.writeInbound(binary);
        assertThat(binary.refCnt()).isZero();
        CloseWebSocketFrame close = closeFrame();
        assertThat(close.statusCode()).isEqualTo(CloseCode.UNSUPPORTED_DATA.code());
        assertThat(close.reasonText()).isEqualTo("binary frames are not supported");
        close.release();
    }

    @Test
    void aMessageFloodClosesWith1008OnceAndIgnoresTheRest() {
        upgraded(l -> l.toBuilder().maxInboundMessagesPerSecond(3).permessageDeflate(false).build(), true);
        for (int i = 0; i < 10; i++) {
            TextWebSocketFrame f = new TextWebSocketFrame("{\"type\":\"unsubscribe\",\"topic\":\"nope\"}");
            channel.writeInbound(f);
            assertThat(f.refCnt()).isZero();
        }
        channel.runPendingTasks();
        int errors = 0;
        CloseWebSocketFrame close = null;
        Object out;
        while ((out = channel.readOutbound()) != null) {
            if (out instanceof CloseWebSocketFrame c) {
                assertThat(close).as("one close frame only").isNull();
                close = c;
            } else {
                errors++;
                io.netty.util.ReferenceCountUtil.release(out);
            }
        }
        assertThat(errors).as("the first 3 messages were answered").isEqualTo(3);
        assertThat(close).isNotNull();
        assertThat(close.statusCode()).isEqualTo(CloseCode.POLICY_VIOLATION.code());
        close.release();
    }

    @Test
    void aMessageCutOffByADisconnectIsThePeersDoingNotABug() {
        assertThat(LiveSessionHandler.causedByPeer(new PrematureChannelClosureException("gone mid-message"))).isTrue();
        assertThat(LiveSessionHandler.causedByPeer(new CorruptedWebSocketFrameException())).isTrue();
        assertThat(LiveSessionHandler.causedByPeer(new TooLongFrameException())).isTrue();
        assertThat(LiveSessionHandler.causedByPeer(new DecompressionException(new java.util.zip.DataFormatException())))
                .isTrue();
        assertThat(LiveSessionHandler.causedByPeer(new java.io.IOException("Connection reset by peer"))).isTrue();
    }

    @Test
    void aFailureInOurOwnCodeIsABugEvenInsideADecoder() {
        assertThat(LiveSessionHandler.causedByPeer(new IllegalStateException("store broke"))).isFalse();
        assertThat(LiveSessionHandler.causedByPeer(new DecoderException(new NullPointerException()))).isFalse();
        assertThat(LiveSessionHandler.causedByPeer(new DecoderException(new OutOfMemoryError()))).isFalse();
    }

    @Test
    void aMessageCutOffByADisconnectSendsNoCloseFrame() {
        upgraded(l -> l);
        channel.pipeline().fireExceptionCaught(new PrematureChannelClosureException("gone mid-message"));
        channel.runPendingTasks();
        assertThat((Object) channel.readOutbound()).isNull();
        assertThat(channel.isOpen()).isFalse();
    }

    @Test
    void aTooLongMessageClosesWith1009() {
        upgraded(l -> l);
        channel.pipeline().fireExceptionCaught(new TooLongFrameException("too long"));
        CloseWebSocketFrame close = closeFrame();
        assertThat(close.statusCode()).isEqualTo(CloseCode.MESSAGE_TOO_BIG.code());
        close.release();
    }

    @Test
    void anUnexpectedFailureClosesWith1011SoTheClientResumesElsewhere() {
        upgraded(l -> l);
        channel.pipeline().fireExceptionCaught(new IllegalStateException("store broke"));
        CloseWebSocketFrame close = closeFrame();
        assertThat(close.statusCode()).isEqualTo(CloseCode.INTERNAL_ERROR.code());
        close.release();
    }

    @Test
    void anUpgradeThatCompletesAfterTheDrainBeganIsClosedWith1012AndAHint() {
        upgraded(l -> l);
        lifecycle.advanceTo(ServerState.CLOSING); // past the balancer grace: new work is refused
        EmbeddedChannel late = new EmbeddedChannel(handler("192.0.2.3"));
        try {
            late.pipeline().fireUserEventTriggered(new WebSocketServerProtocolHandler.HandshakeComplete(
                    "/v1/live?topic=t", new DefaultHttpHeaders(), null));
            late.runPendingTasks();
            CloseWebSocketFrame close = late.readOutbound();
            assertThat(close.statusCode()).isEqualTo(CloseCode.SERVICE_RESTART.code());
            assertThat(CloseCode.parseRetryMs(close.reasonText())).isPresent();
            close.release();
        } finally {
            late.finishAndReleaseAll();
        }
    }

    @Test
    void aConnectionOverTheLimitIsClosedWith1013AndAHintInsteadOfSubscribed() {
        upgraded(l -> l.withMaxConnections(1)); // this connection takes the only slot
        EmbeddedChannel second = new EmbeddedChannel(handler("192.0.2.2"));
        try {
            second.pipeline().fireUserEventTriggered(new WebSocketServerProtocolHandler.HandshakeComplete(
                    "/v1/live?topic=t", new DefaultHttpHeaders(), null));
            second.runPendingTasks();
            Object first = second.readOutbound();
            assertThat(first).isInstanceOf(CloseWebSocketFrame.class);
            CloseWebSocketFrame close = (CloseWebSocketFrame) first;
            assertThat(close.statusCode()).isEqualTo(CloseCode.TRY_AGAIN_LATER.code());
            assertThat(CloseCode.parseRetryMs(close.reasonText())).isPresent();
            close.release();
        } finally {
            second.finishAndReleaseAll();
        }
    }
}
