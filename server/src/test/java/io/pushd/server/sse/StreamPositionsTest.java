package io.pushd.server.sse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.pushd.protocol.EventId;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class StreamPositionsTest {

    @Test
    void oneTopicsIdIsItsEventIdAndEmptyWhileNotKnown() {
        StreamPositions p = new StreamPositions(List.of("t"), Arrays.asList((EventId) null));
        assertThat(p.known("t")).isFalse();
        assertThat(p.text()).isEmpty();
        p.set("t", new EventId("ep", 0));
        p.advance("t", 41);
        assertThat(p.known("t")).isTrue();
        assertThat(p.text()).isEqualTo("ep-41");
    }

    @Test
    void theCursorIsEveryKnownTopicAtItsPositionInTheStreamsOrderAsTextAndAsBytes() {
        Random random = new Random(7);
        for (int round = 0; round < 500; round++) {
            int n = 2 + random.nextInt(6);
            List<String> topics = new ArrayList<>();
            List<EventId> start = new ArrayList<>();
            Map<String, EventId> expected = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                String topic = "topic." + i + "-" + random.nextInt(1000);
                EventId at = random.nextInt(4) == 0 ? null : new EventId("e" + random.nextInt(99), random.nextInt(10));
                topics.add(topic);
                start.add(at);
                expected.put(topic, at);
            }
            StreamPositions p = new StreamPositions(topics, start);
            for (int step = 0; step < 20; step++) {
                String topic = topics.get(random.nextInt(n));
                if (expected.get(topic) == null || random.nextInt(5) == 0) { // a subscribed or a reset
                    EventId at = new EventId("r" + random.nextInt(9), random.nextInt(100));
                    p.set(topic, at);
                    expected.put(topic, at);
                } else { // an event: any digit count up to the longest sequence
                    long seq = random.nextInt(3) == 0 ? Long.MAX_VALUE - random.nextInt(10)
                            : (long) Math.pow(10, random.nextInt(18)) + random.nextInt(10);
                    p.advance(topic, seq);
                    expected.put(topic, new EventId(expected.get(topic).epoch(), seq));
                }
                String cursor = cursorOf(expected);
                assertThat(p.text()).isEqualTo(cursor);
                assertThat(p.cursorLength()).isEqualTo(cursor.length());
                assertThat(p.cursorBound()).isGreaterThanOrEqualTo(cursor.length());
                ByteBuf out = Unpooled.buffer();
                try {
                    p.writeCursor(out);
                    assertThat(out.toString(StandardCharsets.US_ASCII)).isEqualTo(cursor);
                } finally {
                    out.release();
                }
            }
        }
    }

    /** T1@E-5,T2@E-0: the known topics in order (SseCursor's format, which a resume parses). */
    private static String cursorOf(Map<String, EventId> positions) {
        List<String> parts = new ArrayList<>();
        positions.forEach((topic, at) -> {
            if (at != null) {
                parts.add(topic + "@" + at);
            }
        });
        return String.join(",", parts);
    }

    @Test
    void anEventOfATopicWhosePositionIsNotKnownIsABug() {
        StreamPositions p = new StreamPositions(List.of("a", "b"), Arrays.asList(null, new EventId("ep", 1)));
        assertThat(p.text()).isEqualTo("b@ep-1");
        assertThatThrownBy(() -> p.advance("a", 1)).isInstanceOf(IllegalStateException.class);
    }
}
