package io.pushd.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CloseCodeTest {

    @Test
    void retryReasonParsesBackToTheSameDelay() {
        for (long ms : new long[] {0, 1, 1500, 999_999_999_999L}) {
            String reason = CloseCode.retryReason(ms);

            assertThat(CloseCode.parseRetryMs(reason)).hasValue(ms);
        }
        assertThat(CloseCode.retryReason(250)).isEqualTo("{\"retryMs\":250}");
    }

    @Test
    void retryReasonFitsInACloseFrame() {
        assertThat(CloseCode.retryReason(999_999_999_999L).getBytes(StandardCharsets.UTF_8))
                .hasSizeLessThanOrEqualTo(CloseCode.MAX_REASON_BYTES);
    }

    @Test
    void negativeRetryIsRejected() {
        assertThatThrownBy(() -> CloseCode.retryReason(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void surroundingWhitespaceIsToleratedWhenParsing() {
        assertThat(CloseCode.parseRetryMs("  {\"retryMs\":42}\n")).hasValue(42);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "going away", "{\"retryMs\":}", "{\"retryMs\":-5}", "{\"retryMs\":1.5}",
            "{\"retryMs\":\"5\"}", "{\"retryMs\":5", "{\"retryMs\":5,\"x\":1}", "{\"retry\":5}",
            "{\"retryMs\":1234567890123}"})
    void junkReasonsCarryNoRetryHint(String reason) {
        assertThat(CloseCode.parseRetryMs(reason)).isEmpty();
    }

    @Test
    void nullReasonCarriesNoRetryHint() {
        assertThat(CloseCode.parseRetryMs(null)).isEmpty();
    }

    @Test
    void shortReasonIsKeptAsIs() {
        String reason = "x".repeat(CloseCode.MAX_REASON_BYTES);

        assertThat(CloseCode.truncateReason(reason)).isSameAs(reason);
        assertThat(CloseCode.truncateReason(null)).isEmpty();
    }

    @Test
    void longAsciiReasonIsCutToTheLimit() {
        String cut = CloseCode.truncateReason("y".repeat(500));

        assertThat(cut).isEqualTo("y".repeat(CloseCode.MAX_REASON_BYTES));
    }

    @Test
    void truncationNeverSplitsAMultiByteCharacter() {
        // Shift a 2-, 3- and 4-byte character across the cut point at every offset.
        for (String ch : new String[] {"\u00e9", "\u20ac", "\uD83D\uDE00"}) {
            for (int prefix = CloseCode.MAX_REASON_BYTES - 4; prefix <= CloseCode.MAX_REASON_BYTES; prefix++) {
                String reason = "a".repeat(prefix) + ch + ch + "tail";

                String cut = CloseCode.truncateReason(reason);
                byte[] bytes = cut.getBytes(StandardCharsets.UTF_8);

                assertThat(bytes.length).isLessThanOrEqualTo(CloseCode.MAX_REASON_BYTES);
                assertThat(reason).startsWith(cut);
                assertThat(cut).doesNotContain("\uFFFD");
                // nothing more could have been kept: the next character would not fit
                int next = cut.length() < reason.length()
                        ? reason.substring(cut.length(), reason.offsetByCodePoints(cut.length(), 1))
                                .getBytes(StandardCharsets.UTF_8).length
                        : 0;
                assertThat(bytes.length + next).isGreaterThan(CloseCode.MAX_REASON_BYTES);
            }
        }
    }

    @Test
    void ofFindsEveryCodeTheServerSends() {
        assertThat(CloseCode.of(1000)).isEqualTo(CloseCode.NORMAL);
        assertThat(CloseCode.of(1012)).isEqualTo(CloseCode.SERVICE_RESTART);
        assertThat(CloseCode.of(1013)).isEqualTo(CloseCode.TRY_AGAIN_LATER);
        for (CloseCode c : CloseCode.values()) {
            assertThat(CloseCode.of(c.code())).isSameAs(c);
        }
    }

    @Test
    void ofRejectsCodesTheServerNeverSends() {
        assertThatThrownBy(() -> CloseCode.of(1005)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1005");
        assertThatThrownBy(() -> CloseCode.of(4000)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @ValueSource(ints = {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4000, 4999})
    void codesTheRfcAndTheRegistryDefineMayBeSent(int code) {
        assertThat(CloseCode.isTransmittable(code)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 32768, 65535})
    void reservedAndUnassignedCodesMayNotBeSent(int code) {
        assertThat(CloseCode.isTransmittable(code)).isFalse();
    }

    @Test
    void everyCodeTheServerSendsMayBeSent() {
        for (CloseCode c : CloseCode.values()) {
            assertThat(CloseCode.isTransmittable(c.code())).as(c.describe()).isTrue();
        }
    }

    @Test
    void describeShowsCodeAndLabel() {
        assertThat(CloseCode.SERVICE_RESTART.describe()).isEqualTo("1012 service restart");
    }

    @Test
    void onlyRestartAndTryAgainLaterCarryARetryHint() {
        for (CloseCode c : CloseCode.values()) {
            boolean expected = c.code() == 1012 || c.code() == 1013;
            assertThat(c.carriesRetryHint()).as(c.describe()).isEqualTo(expected);
            assertThat(CloseCode.carriesRetryHint(c.code())).isEqualTo(expected);
        }
        assertThat(CloseCode.carriesRetryHint(4999)).isFalse();
    }
}
