package io.pushd.server.topic;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameEncoder;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.history.EventHistory.EventData;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WebSocketFramesTest {

    /** What the server wrote before: the protocol's JSON through Netty's own frame encoder. */
    private static byte[] nettyFrame(String topic, EventId id, long ts, byte[] data) {
        EmbeddedChannel ch = new EmbeddedChannel(new WebSocket13FrameEncoder(false));
        ch.writeOutbound(new TextWebSocketFrame(Unpooled.wrappedBuffer(ProtocolCodec.encodeEvent(topic, id, ts, data))));
        ByteBuf all = Unpooled.buffer();
        ByteBuf part;
        while ((part = ch.readOutbound()) != null) {
            all.writeBytes(part);
            part.release();
        }
        ch.finish();
        return ByteBufUtil.getBytes(all);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 20, 60, 124, 125, 126, 127, 1000, 65_400, 65_535, 70_000})
    void aWholeFrameIsByteForByteWhatNettysEncoderWritesForTheProtocolsJson(int pad) {
        String json = "{\"s\":\"" + "x".repeat(pad) + "\",\"u\":\"é✓😀\",\"n\":[1,2.5e3,null]}";
        byte[] data = json.getBytes(StandardCharsets.UTF_8);
        for (String topic : new String[] {"t", "orders.eu-1:A_b"}) {
            EventId id = new EventId("k3x9a", 1L + pad * 7919L);
            long ts = 1_764_580_000_123L;
            byte[] expected = nettyFrame(topic, id, ts, data);

            ByteBuf one = EventFormat.WEBSOCKET_FRAME.encode(PooledByteBufAllocator.DEFAULT, topic, id, ts, data);
            assertThat(ByteBufUtil.getBytes(one)).isEqualTo(expected);
            assertThat(EventFormat.WEBSOCKET_FRAME.payloadBytes(one.readableBytes()))
                    .isEqualTo(ProtocolCodec.encodeEvent(topic, id, ts, data).length);
            one.release();

            ByteBuf appended = PooledByteBufAllocator.DEFAULT.directBuffer(16);
            EventFormat.WEBSOCKET_FRAME.append(appended, topic, id.epoch(), id.seq(), ts, EventData.of(data));
            EventFormat.WEBSOCKET_FRAME.append(appended, topic, id.epoch(), id.seq(), ts, EventData.of(data));
            byte[] twice = new byte[expected.length * 2];
            System.arraycopy(expected, 0, twice, 0, expected.length);
            System.arraycopy(expected, 0, twice, expected.length, expected.length);
            assertThat(ByteBufUtil.getBytes(appended)).isEqualTo(twice);
            appended.release();

            ByteBuf replayed = PooledByteBufAllocator.DEFAULT.directBuffer(16);
            EventFormat.ReplayAppender appender = EventFormat.WEBSOCKET_FRAME.appender(topic, id.epoch());
            appender.append(replayed, id.seq(), ts, EventData.of(data));
            appender.append(replayed, id.seq(), ts, EventData.of(data));
            assertThat(ByteBufUtil.getBytes(replayed)).isEqualTo(twice);
            replayed.release();
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 9, 10, 99, 100, 101, 12_345, 99_999_999, 100_000_000, Integer.MAX_VALUE,
        Integer.MAX_VALUE + 1L, 4_294_967_296L, 12_300_000_001L, 999_999_999_999L, 1_764_580_000_123L, 10_000_000_000_000_000L,
        999_999_999_999_999_999L, 1_000_000_000_000_000_000L, Long.MAX_VALUE})
    void aReplayAppendersFramesAreByteForByteNettysForEverySequenceAndTimeLength(long n) {
        assertThat(EventAppender.digits(n)).as("digits of %d", n).isEqualTo(Long.toString(n).length());
        byte[] data = "{\"a\":[]}".getBytes(StandardCharsets.UTF_8);
        EventFormat.ReplayAppender appender = EventFormat.WEBSOCKET_FRAME.appender("orders", "k3x9a");
        ByteBuf heap = Unpooled.buffer(1); // grows on the first append
        try {
            for (long[] seqTs : new long[][] {{n, 1_764_580_000_123L}, {1, n}, {n, n}}) {
                byte[] expected = nettyFrame("orders", new EventId("k3x9a", seqTs[0]), seqTs[1], data);
                heap.clear();
                appender.append(heap, seqTs[0], seqTs[1], EventData.of(data));
                assertThat(ByteBufUtil.getBytes(heap)).isEqualTo(expected);
            }
        } finally {
            heap.release();
        }
    }

    @org.junit.jupiter.api.Test
    void aDivisionByAHundredWithoutDividingIsExactAtTheEdgesAndAcrossEveryInt() {
        long wrong = -1;
        for (long x = 0; x <= Integer.MAX_VALUE && wrong < 0; x += x < 1_000_000 || x > Integer.MAX_VALUE - 1_000_000 ? 1 : 997) {
            if (EventAppender.div100((int) x) != (int) x / 100) {
                wrong = x;
            }
        }
        assertThat(wrong).as("the first x whose x / 100 came out wrong").isEqualTo(-1);
    }
}
