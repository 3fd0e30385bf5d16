package io.pushd.server.sse;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.pushd.protocol.ClientMessage;
import io.pushd.protocol.CloseCode;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ServerMessage;
import io.pushd.server.lifecycle.RetryHints;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.topic.LiveBatch;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The sink on an EmbeddedChannel: one HTTP chunk per SSE message, the shared event bytes, no leak. */
class SseSinkTest {

    final EmbeddedChannel channel = new EmbeddedChannel();
    final ServerMetrics metrics = new ServerMetrics();
    final RetryHints hints = new RetryHints(Duration.ofSeconds(5), 2000);

    @AfterEach
    void finish() {
        assertThat(channel.finishAndReleaseAll()).isFalse();
    }

    SseSink sink(ClientMessage.Subscribe... topics) {
        return new SseSink(channel, metrics, hints, List.of(topics));
    }

    /** The next chunk's text; each write of the sink is one HttpContent holding whole messages. */
    String next() {
        HttpContent c = channel.readOutbound();
        try {
            String text = c.content().toString(StandardCharsets.UTF_8);
            assertThat(text).endsWith("\n\n");
            return text;
        } finally {
            c.release();
        }
    }

    ByteBuf encoded(String topic, long seq) {
        return SseEventFormat.INSTANCE.encode(UnpooledByteBufAllocator.DEFAULT, topic, new EventId("ep", seq), 7L,
                "{\"n\":1}".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aSingleTopicStreamWritesTheSharedEncodingAsItIsWithTheEventIdAsId() {
        SseSink s = sink(new ClientMessage.Subscribe("t", null));
        s.send(new ServerMessage.Subscribed("t", new EventId("ep", 4), new EventId("ep", 1), "ep"));
        ByteBuf shared = encoded("t", 5);
        s.sendEvent("t", 5, shared.retainedDuplicate());
        s.flush();
        assertThat(next()).startsWith("event: subscribed\nid: ep-4\ndata: {\"type\":\"subscribed\"");
        assertThat(next()).isEqualTo("id: ep-5\ndata: {\"type\":\"event\",\"topic\":\"t\",\"id\":\"ep-5\",\"ts\":7,"
                + "\"data\":{\"n\":1}}\n\n");
        assertThat(shared.release()).isTrue(); // every duplicate was released by the write
    }

    @Test
    void aChunkedStreamWritesTheSharedChunksBelowTheEncoderAndNothingAfterItsLastChunk() {
        // a client that does not read: what reaches the socket stays there, and the last chunk's
        // write never completes, so the connection stays open after the stream ended
        List<ByteBuf> socket = new java.util.ArrayList<>();
        EmbeddedChannel ch = chunkedResponse(socket);
        SseSink s = new SseSink(ch, ch.pipeline().context(HttpResponseEncoder.class), metrics, hints,
                List.of(new ClientMessage.Subscribe("t", null)));
        assertThat(s.format()).isSameAs(SseEventFormat.CHUNKED);
        ByteBuf shared = SseEventFormat.CHUNKED.encode(UnpooledByteBufAllocator.DEFAULT, "t", new EventId("ep", 5), 7L,
                "{\"n\":1}".getBytes(StandardCharsets.UTF_8));
        String chunk = shared.toString(StandardCharsets.UTF_8);
        LiveBatch batch = new LiveBatch(1);
        batch.add("ep", 5, shared, SseEventFormat.CHUNKED.payloadBytes(shared.readableBytes()));

        assertThat(s.sendLive("t", batch, 0, 1)).isTrue();
        assertThat(wire(socket)).as("the shared chunk as it is, not chunked again").isEqualTo(chunk);

        s.close(CloseCode.SERVICE_RESTART, CloseCode.retryReason(1_500));
        assertThat(wire(socket)).contains("event: close").endsWith("\r\n0\r\n\r\n");
        assertThat(ch.isActive()).isTrue();
        assertThat(s.sendLive("t", batch, 0, 1)).as("nothing after the last chunk").isFalse();
        s.sendEvent(shared.retainedDuplicate());
        s.flush();
        assertThat(wire(socket)).isEmpty();
        assertThat(shared.release()).as("every reference the sink took was released").isTrue();
        ch.close();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void aMultiTopicChunkedStreamWritesEachEventAsOneChunkWithItsCursorBelowTheEncoder() {
        List<ByteBuf> socket = new java.util.ArrayList<>();
        EmbeddedChannel ch = chunkedResponse(socket);
        SseSink s = new SseSink(ch, ch.pipeline().context(HttpResponseEncoder.class), metrics, hints,
                List.of(new ClientMessage.Subscribe("t", null), new ClientMessage.Subscribe("u", new EventId("ep", 2))));
        assertThat(s.format()).as("the shared part has no cursor of its own").isSameAs(SseEventFormat.INSTANCE);
        s.send(new ServerMessage.Subscribed("t", new EventId("ep", 8), null, "ep"));
        s.flush();
        assertThat(wire(socket)).contains("id: t@ep-8,u@ep-2\n");
        ByteBuf e9 = encoded("t", 9);
        ByteBuf e10 = encoded("t", 10);
        String data = e9.toString(StandardCharsets.UTF_8).substring("id: ep-9\n".length());
        LiveBatch batch = new LiveBatch(2);
        batch.add("ep", 9, e9, e9.readableBytes());
        batch.add("ep", 10, e10, e10.readableBytes());

        assertThat(s.sendLive("t", batch, 0, 2)).isTrue();
        assertThat(wire(socket)).as("one chunk per event, each what the encoder makes of the message")
                .isEqualTo(chunk("id: t@ep-9,u@ep-2\n" + data) + chunk("id: t@ep-10,u@ep-2\n" + data.replace("ep-9", "ep-10")));
        // a replayed event of the other topic: its own chunk, the cursor moved on both topics
        ByteBuf u3 = encoded("u", 3);
        String uData = u3.toString(StandardCharsets.UTF_8).substring("id: ep-3\n".length());
        s.sendEvent("u", 3, u3);
        assertThat(u3.refCnt()).as("a replayed event is the sink's to release").isZero();
        assertThat(wire(socket)).as("a replay read's chunks wait for its flush").isEmpty();
        s.flush();
        assertThat(wire(socket)).isEqualTo(chunk("id: t@ep-10,u@ep-3\n" + uData));
        // and go before anything written after them
        s.sendEvent("u", 4, encoded("u", 4));
        s.send(new ServerMessage.Reset("u", new EventId("ep2", 0), io.pushd.protocol.ResetReason.UNKNOWN_EPOCH));
        s.flush();
        assertThat(wire(socket)).startsWith(Integer.toHexString(("id: t@ep-10,u@ep-4\n" + uData.replace("ep-3", "ep-4"))
                .length()) + "\r\nid: t@ep-10,u@ep-4\n").contains("event: reset\nid: t@ep-10,u@ep2-0\n");

        s.close(CloseCode.SERVICE_RESTART, CloseCode.retryReason(1_500));
        assertThat(wire(socket)).contains("event: close").endsWith("\r\n0\r\n\r\n");
        assertThat(s.sendLive("t", batch, 0, 2)).as("nothing after the last chunk").isFalse();
        ByteBuf late = encoded("t", 11);
        s.sendEvent("t", 11, late);
        s.flush();
        assertThat(wire(socket)).isEmpty();
        assertThat(late.refCnt()).isZero();
        assertThat(e9.release() && e10.release()).as("the batch's buffers are lent, not taken").isTrue();
        ch.close();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    /** {@code message} as one HTTP/1.1 chunk, as the codec frames it. */
    private static String chunk(String message) {
        return Integer.toHexString(message.getBytes(StandardCharsets.UTF_8).length) + "\r\n" + message + "\r\n";
    }

    /**
     * A channel with the HTTP encoder above an end that keeps what reaches it in {@code socket}
     * (a client that does not read: nothing completes), after a chunked response's head.
     */
    private static EmbeddedChannel chunkedResponse(List<ByteBuf> socket) {
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                socket.add((ByteBuf) msg);
            }
        }, new HttpResponseEncoder());
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        HttpUtil.setTransferEncodingChunked(head, true);
        ch.write(head);
        wire(socket); // the head
        return ch;
    }

    /** Everything written to the socket since the last call, as text. */
    private static String wire(List<ByteBuf> socket) {
        StringBuilder out = new StringBuilder();
        for (ByteBuf b : socket) {
            out.append(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        socket.clear();
        return out.toString();
    }

    @Test
    void severalTopicsShareTheDataPartAndWriteTheirOwnCursorInTheSameChunk() {
        SseSink a = sink(new ClientMessage.Subscribe("t", null),
                new ClientMessage.Subscribe("u", new EventId("ep", 2)));
        EmbeddedChannel other = new EmbeddedChannel();
        SseSink b = new SseSink(other, metrics, hints, List.of(new ClientMessage.Subscribe("t", null),
                new ClientMessage.Subscribe("v", null)));
        a.send(new ServerMessage.Subscribed("t", null, null, "ep"));
        b.send(new ServerMessage.Subscribed("t", null, null, "ep"));
        b.send(new ServerMessage.Subscribed("v", new EventId("ep", 9), new EventId("ep", 1), "ep"));
        ByteBuf shared = encoded("t", 1);
        a.sendEvent("t", 1, shared.retainedDuplicate());
        b.sendEvent("t", 1, shared.retainedDuplicate());
        a.flush();
        b.flush();
        assertThat(next()).startsWith("event: subscribed\nid: t@ep-0,u@ep-2\n");
        assertThat(next()).startsWith("id: t@ep-1,u@ep-2\ndata: {\"type\":\"event\",\"topic\":\"t\",\"id\":\"ep-1\"");
        List<String> otherChunks = List.of(text(other.readOutbound()), text(other.readOutbound()),
                text(other.readOutbound()));
        assertThat(otherChunks.get(2)).startsWith("id: t@ep-1,v@ep-9\ndata: {\"type\":\"event\"");
        assertThat(shared.release()).isTrue();
        assertThat(other.finishAndReleaseAll()).isFalse();
    }

    @Test
    void closeWritesRetryAndTheCloseEventInOneChunkThenEndsTheResponseOnce() {
        SseSink s = sink(new ClientMessage.Subscribe("t", null));
        s.close(CloseCode.SERVICE_RESTART, CloseCode.retryReason(1234));
        s.close(CloseCode.TRY_AGAIN_LATER, CloseCode.retryReason(99)); // only the first close counts
        assertThat(next()).isEqualTo("retry: 1234\nevent: close\ndata: {\"code\":1012,\"retryMs\":1234}\n\n");
        Object last = channel.readOutbound();
        assertThat(last).isInstanceOf(LastHttpContent.class);
        assertThat(s.isClosing()).isTrue();
        ByteBuf late = encoded("t", 1); // a live event queued behind the close
        s.sendEvent("t", 1, late);
        s.send(new ServerMessage.Reset("t", new EventId("ep", 1), io.pushd.protocol.ResetReason.FUTURE));
        s.flush();
        assertThat(late.refCnt()).isZero();
        assertThat((Object) channel.readOutbound()).isNull();
    }

    private static String text(HttpContent c) {
        try {
            return c.content().toString(StandardCharsets.UTF_8);
        } finally {
            c.release();
        }
    }
}
