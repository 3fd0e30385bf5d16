package io.pushd.server.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.pipeline.WebSocketSink;
import io.pushd.server.store.ChronicleEventStore;
import io.pushd.server.topic.TopicHub;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hand-off rule on an EmbeddedChannel, one step at a time. */
class TopicSubscriptionTest {

    @TempDir
    Path dataDir;
    ChronicleEventStore store;
    TopicHub hub;
    EmbeddedChannel channel;
    final ServerMetrics metrics = new ServerMetrics();
    final SetTimeProvider clock = new SetTimeProvider(1_800_000_000_000L);

    @BeforeEach
    void setUp() {
        store = new ChronicleEventStore(dataDir, Duration.ofHours(24), 1000, Duration.ofHours(24), false, clock);
        hub = new TopicHub(store::epoch, io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, metrics);
        channel = new EmbeddedChannel();
        for (int i = 1; i <= 5; i++) {
            append(i);
        }
    }

    @AfterEach
    void tearDown() {
        assertThat(channel.finishAndReleaseAll()).isFalse(); // every frame was read by the test
        store.close();
    }

    private void append(long seq) {
        store.append("t", seq, clock.currentTimeMillis(), null, ("{\"n\":" + seq + "}").getBytes(StandardCharsets.UTF_8));
    }

    private ByteBuf liveFrame(long seq) {
        return Unpooled.wrappedBuffer(ProtocolCodec.encodeEvent("t", new EventId(store.epoch(), seq),
                clock.currentTimeMillis(), ("{\"n\":" + seq + "}").getBytes(StandardCharsets.UTF_8)));
    }

    /** Every text frame written so far, as {@code type:seq} (or just the type). */
    private List<String> written() throws Exception {
        channel.runPendingTasks();
        List<String> out = new ArrayList<>();
        Object msg;
        while ((msg = channel.readOutbound()) != null) {
            TextWebSocketFrame f = (TextWebSocketFrame) msg;
            var json = ProtocolCodec.mapper().readTree(f.text());
            f.release();
            assertThat(f.refCnt()).isZero();
            String type = json.path("type").asText();
            out.add(json.has("id") ? type + ":" + EventId.parse(json.path("id").asText()).seq() : type);
        }
        return out;
    }

    @Test
    void replaysTheKeptEventsAfterTheIdThenTakesLiveFramesInSequence() throws Exception {
        TopicSubscription sub = new TopicSubscription("t", new WebSocketSink(channel, metrics), store, hub, metrics, e -> {
            throw e;
        });
        channel.eventLoop().execute(() -> sub.start(new EventId(store.epoch(), 2)));
        assertThat(written()).containsExactly("subscribed:2", "event:3", "event:4", "event:5");

        append(6);
        ByteBuf six = liveFrame(6);
        sub.onLive(6, six);
        sub.endOfBatch(); // the hub flushes once per batch of live events
        assertThat(written()).containsExactly("event:6");
        assertThat(six.refCnt()).as("the shared frame went out as is and was released by the write").isZero();
    }

    @Test
    void aLiveFrameAlreadySentByTheReplayIsDroppedAndReleased() throws Exception {
        TopicSubscription sub = new TopicSubscription("t", new WebSocketSink(channel, metrics), store, hub, metrics, e -> {
            throw e;
        });
        channel.eventLoop().execute(() -> sub.start(new EventId(store.epoch(), 0)));
        assertThat(written()).hasSize(6);

        ByteBuf dup = liveFrame(5);
        sub.onLive(5, dup);
        sub.endOfBatch(); // the hub flushes once per batch of live events
        assertThat(dup.refCnt()).isZero();
        assertThat(written()).isEmpty();
    }

    @Test
    void aLiveFrameAfterAGapIsDroppedAndTheMissingEventsComeFromTheStore() throws Exception {
        TopicSubscription sub = new TopicSubscription("t", new WebSocketSink(channel, metrics), store, hub, metrics, e -> {
            throw e;
        });
        channel.eventLoop().execute(() -> sub.start(null)); // live only, at head 5
        assertThat(written()).containsExactly("subscribed:5"); // its id: where a resume would start

        append(6);
        append(7);
        ByteBuf seven = liveFrame(7); // the offer of 6 has not arrived (yet)
        sub.onLive(7, seven);
        sub.endOfBatch(); // the hub flushes once per batch of live events
        assertThat(seven.refCnt()).isZero();
        assertThat(written()).containsExactly("event:6", "event:7");

        ByteBuf lateSix = liveFrame(6);
        sub.onLive(6, lateSix);
        sub.endOfBatch(); // the hub flushes once per batch of live events
        assertThat(lateSix.refCnt()).isZero();
        assertThat(written()).isEmpty();
    }

    @Test
    void anUnsubscribedTopicReleasesWhateverIsStillOffered() throws Exception {
        TopicSubscription sub = new TopicSubscription("t", new WebSocketSink(channel, metrics), store, hub, metrics, e -> {
            throw e;
        });
        channel.eventLoop().execute(() -> sub.start(null));
        assertThat(written()).containsExactly("subscribed:5");
        sub.close();
        assertThat(hub.subscriberCount("t")).isZero();
        append(6);
        ByteBuf six = liveFrame(6);
        sub.onLive(6, six);
        sub.endOfBatch(); // the hub flushes once per batch of live events
        assertThat(six.refCnt()).isZero();
        assertThat(written()).isEmpty();
    }
}
