package io.pushd.server.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pushd.server.admission.AdmissionControl;
import io.pushd.server.admission.ClientAddress;
import io.pushd.server.admission.ConnectionLimiter;
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
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.core.time.SystemTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The pipelines are the ones {@link HandlerNames} draws, and only the initializer builds them. */
class PushServerInitializerTest {

    @TempDir
    Path dataDir;
    ChronicleEventStore store;
    Publisher publisher;
    EmbeddedChannel channel;
    final ServerMetrics metrics = new ServerMetrics();

    @AfterEach
    void tearDown() throws Exception {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
        publisher.close();
        store.close();
    }

    private PushServerInitializer initializer(boolean deflate) {
        ServerConfig d = ServerConfig.defaults();
        ServerConfig config = d.withLimits(d.limits().withPermessageDeflate(deflate));
        store = new ChronicleEventStore(dataDir, Duration.ofHours(1), 100, Duration.ofHours(1), false,
                SystemTimeProvider.INSTANCE);
        TopicHub hub = new TopicHub(store::epoch, UnpooledByteBufAllocator.DEFAULT, metrics);
        publisher = new Publisher(store, new LocalSequencer(store.heads()), hub, metrics, System::currentTimeMillis, 16);
        Lifecycle lifecycle = new Lifecycle();
        lifecycle.advanceTo(ServerState.READY);
        RetryHints hints = RetryHints.of(config);
        ClientAddress clientAddress = new ClientAddress(List.of());
        ServerContext server = new ServerContext(config, store, publisher, lifecycle, clientAddress, metrics,
                new SessionContext(config.limits(), store, hub, lifecycle, hints,
                        new AdmissionControl(config.limits(), hints), new Sessions(), metrics));
        return new PushServerInitializer(server, ConnectionLimiter.of(config.limits(), -1, clientAddress));
    }

    /** The names of the handlers that are ours (constants of HandlerNames), in pipeline order. */
    private List<String> ours() throws Exception {
        List<String> constants = new ArrayList<>();
        for (var f : HandlerNames.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
                constants.add((String) f.get(null));
            }
        }
        return channel.pipeline().names().stream().filter(constants::contains).toList();
    }

    /** Sends an upgrade that offers permessage-deflate; returns the server's 101 answer. */
    private String upgrade() {
        channel.writeInbound(Unpooled.copiedBuffer("GET /v1/live?topic=t HTTP/1.1\r\nHost: x\r\n"
                + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
                StandardCharsets.US_ASCII));
        channel.runPendingTasks();
        ByteBuf answer = channel.readOutbound();
        try {
            return answer.toString(StandardCharsets.US_ASCII);
        } finally {
            answer.release();
        }
    }

    @Test
    void aConnectionStartsWithTheHttpPipeline() throws Exception {
        PushServerInitializer init = initializer(true);
        channel = new EmbeddedChannel();
        init.initHttp(channel.pipeline());
        assertThat(ours()).containsExactly(HandlerNames.BACKPRESSURE, HandlerNames.FLUSH_CONSOLIDATION,
                HandlerNames.HTTP_CODEC, HandlerNames.HTTP_KEEPALIVE, HandlerNames.HTTP_AGGREGATOR,
                HandlerNames.HTTP_REQUEST_TIMEOUT, HandlerNames.HTTP_CORS, HandlerNames.HTTP_API);
    }

    @Test
    void anSseRequestThatPassesItsRouteGetsTheSsePipelineInTheDrawnOrder() throws Exception {
        PushServerInitializer init = initializer(false);
        channel = new EmbeddedChannel();
        init.initHttp(channel.pipeline());
        channel.writeInbound(Unpooled.copiedBuffer("GET /v1/sse?topic=t HTTP/1.1\r\nHost: x\r\n\r\n",
                StandardCharsets.US_ASCII));
        channel.runPendingTasks();
        StringBuilder out = new StringBuilder();
        for (ByteBuf b; (b = channel.readOutbound()) != null; b.release()) {
            out.append(b.toString(StandardCharsets.US_ASCII));
        }
        assertThat(out.toString()).startsWith("HTTP/1.1 200 OK").contains("text/event-stream", "retry: ",
                "event: subscribed");
        assertThat(ours()).containsExactly(HandlerNames.BACKPRESSURE, HandlerNames.FLUSH_CONSOLIDATION,
                HandlerNames.HTTP_CODEC, HandlerNames.SSE_SESSION);
    }

    @Test
    void anUpgradeThatPassesTheGateGetsTheWebSocketPipelineInTheDrawnOrder() throws Exception {
        PushServerInitializer init = initializer(true);
        channel = new EmbeddedChannel();
        init.initHttp(channel.pipeline());
        String switching = upgrade();

        assertThat(switching).startsWith("HTTP/1.1 101 Switching Protocols").contains("permessage-deflate");
        // ws-compression negotiated the extension and left (Netty's extension handler removes itself)
        assertThat(ours()).containsExactly(HandlerNames.BACKPRESSURE, HandlerNames.FLUSH_CONSOLIDATION,
                HandlerNames.WS_HEARTBEAT, HandlerNames.WS_INBOUND, HandlerNames.WS_PROTOCOL, HandlerNames.WS_AGGREGATOR,
                HandlerNames.WS_SESSION);
    }

    @Test
    void withoutPermessageDeflateTheExtensionIsNotNegotiated() throws Exception {
        PushServerInitializer init = initializer(false);
        channel = new EmbeddedChannel();
        init.initHttp(channel.pipeline());
        String switching = upgrade();
        assertThat(switching).startsWith("HTTP/1.1 101 Switching Protocols").doesNotContain("permessage-deflate");
        assertThat(ours()).contains(HandlerNames.WS_SESSION);
    }
}
