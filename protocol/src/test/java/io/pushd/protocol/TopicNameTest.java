package io.pushd.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TopicNameTest {

    @Test
    void oneCharacterAndTwoHundredCharactersAreValid() {
        assertThat(TopicName.isValid("a")).isTrue();
        assertThat(TopicName.isValid("x".repeat(200))).isTrue();
    }

    @Test
    void twoHundredAndOneCharactersAreInvalid() {
        assertThat(TopicName.isValid("x".repeat(201))).isFalse();
    }

    @Test
    void emptyAndNullAreInvalid() {
        assertThat(TopicName.isValid("")).isFalse();
        assertThat(TopicName.isValid(null)).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"a_b", "a.b", "a:b", "a-b", "_", ".", ":", "-", "AZaz09", "orders:eu-1.v2_x"})
    void lettersDigitsAndEachAllowedPunctuationAreValid(String name) {
        assertThat(TopicName.isValid(name)).isTrue();
        assertThat(TopicName.require(name)).isSameAs(name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a b", "a/b", "/", "caf\u00e9", "\u65e5\u672c", "a@b", "a?b", "a#b", "a,b", "a\tb",
            "a\nb", "a\"b", "\uD83D\uDE00"})
    void spaceSlashUnicodeAndOtherPunctuationAreInvalid(String name) {
        assertThat(TopicName.isValid(name)).isFalse();
        assertThatThrownBy(() -> TopicName.require(name))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expected: 1-200 characters");
    }

    @Test
    void requireShortensALongInvalidNameInItsMessage() {
        String longName = "y".repeat(300);

        assertThatThrownBy(() -> TopicName.require(longName))
                .hasMessageContaining("y".repeat(40) + "...")
                .hasMessageNotContaining("y".repeat(41));
    }
}
