package io.pushd.server.sse;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.history.EventHistory.EventData;
import io.pushd.server.topic.EventFormat;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SseEventFormatTest {

    /** The message as the stream has always written it: the ID, then the WebSocket event JSON on one data: line. */
    private static byte[] reference(String topic, EventId id, long ts, byte[] data) {
        String json = new String(ProtocolCodec.encodeEvent(topic, id, ts, data), StandardCharsets.UTF_8);
        return ("id: " + id + "\ndata: " + json + "\n\n").getBytes(StandardCharsets.UTF_8);
    }

    /** The message as one HTTP/1.1 chunk. */
    private static byte[] chunk(byte[] message) {
        byte[] head = (Integer.toHexString(message.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[head.length + message.length + 2];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(message, 0, all, head.length, message.length);
        all[all.length - 2] = '\r';
        all[all.length - 1] = '\n';
        return all;
    }

    private static byte[] twice(byte[] one) {
        byte[] two = new byte[one.length * 2];
        System.arraycopy(one, 0, two, 0, one.length);
        System.arraycopy(one, 0, two, one.length, one.length);
        return two;
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 20, 125, 126, 1000, 70_000})
    void anEncodedAppendedOrReplayedEventIsByteForByteTheIdLineAndTheProtocolsJson(int pad) {
        byte[] data = ("{\"s\":\"" + "x".repeat(pad) + "\",\"u\":\"é✓😀\",\"n\":[1,2.5e3,null]}").getBytes(StandardCharsets.UTF_8);
        for (String topic : new String[] {"t", "orders.eu-1:A_b"}) {
          for (SseEventFormat format : new SseEventFormat[] {SseEventFormat.INSTANCE, SseEventFormat.CHUNKED}) {
            EventId id = new EventId("k3x9a", 1L + pad * 7919L);
            long ts = 1_764_580_000_123L;
            byte[] message = reference(topic, id, ts, data);
            byte[] expected = format == SseEventFormat.CHUNKED ? chunk(message) : message;

            ByteBuf one = format.encode(PooledByteBufAllocator.DEFAULT, topic, id, ts, data);
            assertThat(ByteBufUtil.getBytes(one)).isEqualTo(expected);
            assertThat(one.capacity()).as("sized exactly").isEqualTo(expected.length);
            assertThat(format.payloadBytes(one.readableBytes())).as("the message's bytes").isEqualTo(message.length);
            one.release();

            ByteBuf appended = PooledByteBufAllocator.DEFAULT.directBuffer(16);
            format.append(appended, topic, id.epoch(), id.seq(), ts, EventData.of(data));
            format.append(appended, topic, id.epoch(), id.seq(), ts, EventData.of(data));
            assertThat(ByteBufUtil.getBytes(appended)).isEqualTo(twice(expected));
            appended.release();

            ByteBuf replayed = PooledByteBufAllocator.DEFAULT.directBuffer(16);
            EventFormat.ReplayAppender appender = format.appender(topic, id.epoch());
            appender.append(replayed, id.seq(), ts, EventData.of(data));
            appender.append(replayed, id.seq(), ts, EventData.of(data));
            assertThat(ByteBufUtil.getBytes(replayed)).isEqualTo(twice(expected));
            replayed.release();
          }
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 1, 9, 10, 99, 100, 12_345, Integer.MAX_VALUE, Integer.MAX_VALUE + 1L, 12_300_000_001L,
        1_764_580_000_123L, 999_999_999_999_999_999L, 1_000_000_000_000_000_000L, Long.MAX_VALUE})
    void aReplayAppendersMessagesAreRightForEverySequenceAndTimeLength(long n) {
        byte[] data = "{\"a\":[]}".getBytes(StandardCharsets.UTF_8);
        EventFormat.ReplayAppender appender = SseEventFormat.INSTANCE.appender("orders", "k3x9a");
        EventFormat.ReplayAppender chunks = SseEventFormat.CHUNKED.appender("orders", "k3x9a");
        ByteBuf heap = Unpooled.buffer(1); // grows on the first append
        try {
            for (long[] seqTs : new long[][] {{n, 1_764_580_000_123L}, {1, n}, {n, n}}) {
                byte[] expected = reference("orders", new EventId("k3x9a", seqTs[0]), seqTs[1], data);
                heap.clear();
                appender.append(heap, seqTs[0], seqTs[1], EventData.of(data));
                assertThat(ByteBufUtil.getBytes(heap)).isEqualTo(expected);
                heap.clear();
                chunks.append(heap, seqTs[0], seqTs[1], EventData.of(data));
                assertThat(ByteBufUtil.getBytes(heap)).isEqualTo(chunk(expected));
            }
        } finally {
            heap.release();
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {-1, Long.MIN_VALUE})
    void aNegativeSequenceOrTimeIsWrittenTheSlowWayButAlike(long n) {
        byte[] data = "{}".getBytes(StandardCharsets.UTF_8);
        for (SseEventFormat format : new SseEventFormat[] {SseEventFormat.INSTANCE, SseEventFormat.CHUNKED}) {
            ByteBuf heap = Unpooled.buffer(1);
            try {
                format.appender("t", "ep").append(heap, 5, n, EventData.of(data));
                byte[] expected = reference("t", new EventId("ep", 5), n, data);
                assertThat(ByteBufUtil.getBytes(heap)).isEqualTo(format == SseEventFormat.CHUNKED ? chunk(expected) : expected);
            } finally {
                heap.release();
            }
        }
    }

    @org.junit.jupiter.api.Test
    void aChunksMessageLengthIsReadBackForEverySizeOfItsHexLength() {
        for (int message : new int[] {1, 15, 16, 255, 256, 4095, 4096, 65_535, 65_536, 1 << 24}) {
            int framed = Integer.toHexString(message).length() + 2 + message + 2;
            assertThat(SseEventFormat.CHUNKED.payloadBytes(framed)).as("message of %d", message).isEqualTo(message);
            assertThat(SseEventFormat.INSTANCE.payloadBytes(framed)).isEqualTo(framed);
        }
    }

    @org.junit.jupiter.api.Test
    void theDataLineStartsAfterTheIdLine() {
        ByteBuf one = SseEventFormat.INSTANCE.encode(Unpooled.buffer().alloc(), "t", new EventId("ep", 12), 7L,
                "1".getBytes(StandardCharsets.UTF_8));
        try {
            assertThat(SseEventFormat.dataOffset(one)).isEqualTo("id: ep-12\n".length());
        } finally {
            one.release();
        }
    }
}
