package io.pushd.loadtest.restart;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.pushd.protocol.EventId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EventAuditTest {

    private final ArrayNode topicsJson = JsonNodeFactory.instance.arrayNode();

    private static EventId id(long seq) {
        return new EventId("ep", seq);
    }

    private EventAudit.Comparison compare(List<EventId> acked, EventId head, long base) {
        Map<String, List<EventId>> a = new LinkedHashMap<>();
        a.put("t", acked);
        Map<String, EventId> heads = new LinkedHashMap<>();
        heads.put("t", head);
        return EventAudit.compare(a, heads, Map.of("t", base), topicsJson);
    }

    @Test
    void everyStoredEventAcknowledgedOnceIsExact() {
        EventAudit.Comparison c = compare(List.of(id(12), id(11), id(13)), id(13), 10);

        assertThat(c.acknowledged()).isEqualTo(3);
        assertThat(c.stored()).isEqualTo(3);
        assertThat(c.bad()).isZero();
        assertThat(c.exact()).isTrue();
        assertThat(topicsJson.get(0).get("baseSeq").asLong()).isEqualTo(10);
        assertThat(topicsJson.get(0).get("head").asText()).isEqualTo("ep-13");
        assertThat(topicsJson.get(0).get("stored").asLong()).isEqualTo(3);
    }

    @Test
    void anIdAcknowledgedTwiceIsBad() {
        EventAudit.Comparison c = compare(List.of(id(11), id(11), id(12)), id(12), 10);

        assertThat(c.bad()).isEqualTo(1);
        assertThat(c.firstBad()).contains("ep-11");
        assertThat(c.exact()).isFalse();
    }

    @Test
    void anIdAtOrBelowTheBaseOrBeyondTheHeadIsBad() {
        assertThat(compare(List.of(id(10), id(11)), id(11), 10).bad()).isEqualTo(1);
        assertThat(compare(List.of(id(11), id(12)), id(11), 10).bad()).isEqualTo(1);
    }

    @Test
    void anIdOfAnotherEpochIsBad() {
        EventAudit.Comparison c = compare(List.of(new EventId("old", 11)), id(11), 10);

        assertThat(c.bad()).isEqualTo(1);
        assertThat(c.exact()).isFalse();
    }

    @Test
    void anEventStoredButNeverAcknowledgedBreaksTheEquality() {
        EventAudit.Comparison c = compare(List.of(id(11), id(12)), id(13), 10);

        assertThat(c.bad()).isZero();
        assertThat(c.stored()).isEqualTo(3);
        assertThat(c.acknowledged()).isEqualTo(2);
        assertThat(c.exact()).isFalse();
    }

    @Test
    void aTopicNeverWrittenWithNothingAcknowledgedIsExact() {
        EventAudit.Comparison c = compare(List.of(), null, 0);

        assertThat(c.stored()).isZero();
        assertThat(c.exact()).isTrue();
        assertThat(topicsJson.get(0).get("head").isNull()).isTrue();
    }

    @Test
    void anAcknowledgementOnATopicWithoutHeadIsBad() {
        assertThat(compare(List.of(id(1)), null, 0).bad()).isEqualTo(1);
    }
}
