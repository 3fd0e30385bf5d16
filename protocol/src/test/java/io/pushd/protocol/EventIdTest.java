package io.pushd.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class EventIdTest {

    @Test
    void parsedIdFormatsBackToTheSameText() {
        EventId id = EventId.parse("k2x9a1b-42");

        assertThat(id.epoch()).isEqualTo("k2x9a1b");
        assertThat(id.seq()).isEqualTo(42);
        assertThat(id.toString()).isEqualTo("k2x9a1b-42");
        assertThat(EventId.parse(id.toString())).isEqualTo(id);
    }

    @Test
    void sequenceZeroMeansBeforeTheFirstEventAndIsAccepted() {
        EventId id = EventId.parse("e-0");

        assertThat(id).isEqualTo(new EventId("e", 0));
        assertThat(id.toString()).isEqualTo("e-0");
    }

    @Test
    void largestSequenceRoundTrips() {
        String text = "abc-" + Long.MAX_VALUE;

        assertThat(EventId.parse(text).seq()).isEqualTo(Long.MAX_VALUE);
        assertThat(EventId.parse(text).toString()).isEqualTo(text);
    }

    @Test
    void epochOfThirtyTwoCharactersIsAcceptedAndThirtyThreeIsNot() {
        String epoch32 = "a".repeat(32);

        assertThat(EventId.parse(epoch32 + "-1").epoch()).isEqualTo(epoch32);
        assertThatThrownBy(() -> EventId.parse("a".repeat(33) + "-1"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "",              // empty
            "abc",           // no dash
            "abc-",          // dash but no sequence
            "-5",            // no epoch
            "abc-12x",       // non-digit sequence
            "abc-+5",        // sign is not a digit
            "abc- 5",        // space
            "ABC-5",         // uppercase epoch
            "aBc-5",         // mixed-case epoch
            "abc--5",        // negative sequence
            "ab_c-5",        // punctuation in epoch
    })
    void malformedIdsAreRejected(String text) {
        assertThatThrownBy(() -> EventId.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expected");
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc-9223372036854775808", "abc-99999999999999999999"})
    void sequenceBeyondALongIsRejectedAsOutOfRange(String text) {
        assertThatThrownBy(() -> EventId.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("out of range");
    }

    @Test
    void overlongTextIsRejectedBeforeAnyParsing() {
        String overlong = "a".repeat(EventId.MAX_LENGTH - 1) + "-1"; // 65 characters

        assertThatThrownBy(() -> EventId.parse(overlong)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void nullIsRejected() {
        assertThatThrownBy(() -> EventId.parse(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void constructorRejectsNegativeSequenceAndBadEpoch() {
        assertThatThrownBy(() -> new EventId("abc", -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(">= 0");
        assertThatThrownBy(() -> new EventId("Abc", 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new EventId(null, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
