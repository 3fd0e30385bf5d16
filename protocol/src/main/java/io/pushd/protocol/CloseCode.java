package io.pushd.protocol;

import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every WebSocket close code this server sends, in one place (besides echoing a client's own
 * code). 1012 and 1013 carry a reason {@code {"retryMs":N}}: the delay the server suggests
 * before reconnecting.
 */
public enum CloseCode {
    NORMAL(1000, "normal closure"),
    GOING_AWAY(1001, "going away"),
    PROTOCOL_ERROR(1002, "protocol error"),
    UNSUPPORTED_DATA(1003, "unsupported data"),
    INVALID_PAYLOAD(1007, "invalid payload"),
    POLICY_VIOLATION(1008, "policy violation"),
    MESSAGE_TOO_BIG(1009, "message too big"),
    INTERNAL_ERROR(1011, "internal error"),
    SERVICE_RESTART(1012, "service restart"),
    TRY_AGAIN_LATER(1013, "try again later"),
    /**
     * The session's token reached {@code exp} (plus the leeway) without an in-band refresh. The
     * client gets a new token and reconnects at once, resuming from its last IDs.
     */
    TOKEN_EXPIRED(4001, "token expired");

    /** RFC 6455 section 5.5: control frame payload is at most 125 bytes, 2 of them the code. */
    public static final int MAX_REASON_BYTES = 123;

    private static final Pattern RETRY = Pattern.compile("\\{\"retryMs\":(\\d{1,12})}");

    private final int code;
    private final String label;

    CloseCode(int code, String label) {
        this.code = code;
        this.label = label;
    }

    public int code() {
        return code;
    }

    /** Readable name for logs, e.g. {@code 1012 service restart}. */
    public String describe() {
        return code + " " + label;
    }

    /**
     * Whether a close frame may carry this code (RFC 6455 section 7.4): the codes the RFC and the
     * IANA registry define for the wire (1000-1003, 1007-1014) and those for libraries and
     * applications (3000-4999). 1004-1006 and 1015 are reserved, the rest unassigned; a peer that
     * sends one gets 1002.
     */
    public static boolean isTransmittable(int code) {
        return code >= 1000 && code <= 1003 || code >= 1007 && code <= 1014 || code >= 3000 && code <= 4999;
    }

    public static CloseCode of(int code) {
        for (CloseCode c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        throw new IllegalArgumentException("close code not used by this server: " + code);
    }

    /** Whether this code's close carries the server's {@code retryMs} hint: 1012 and 1013 only. */
    public boolean carriesRetryHint() {
        return this == SERVICE_RESTART || this == TRY_AGAIN_LATER;
    }

    /** As {@link #carriesRetryHint()}, for a code as received. */
    public static boolean carriesRetryHint(int code) {
        return code == SERVICE_RESTART.code || code == TRY_AGAIN_LATER.code;
    }

    /** The reason text for 1012/1013: {@code {"retryMs":N}}. */
    public static String retryReason(long retryMs) {
        if (retryMs < 0) {
            throw new IllegalArgumentException("retryMs: " + retryMs + " (expected: >= 0)");
        }
        return "{\"retryMs\":" + retryMs + "}";
    }

    /** Reads the server's hint out of a close reason; empty when the reason carries none. */
    public static OptionalLong parseRetryMs(String reason) {
        if (reason == null) {
            return OptionalLong.empty();
        }
        Matcher m = RETRY.matcher(reason.trim());
        return m.matches() ? OptionalLong.of(Long.parseLong(m.group(1))) : OptionalLong.empty();
    }

    /** Cuts a reason to {@value #MAX_REASON_BYTES} UTF-8 bytes without splitting a character. */
    public static String truncateReason(String reason) {
        if (reason == null) {
            return "";
        }
        byte[] utf8 = reason.getBytes(StandardCharsets.UTF_8);
        if (utf8.length <= MAX_REASON_BYTES) {
            return reason;
        }
        int end = MAX_REASON_BYTES;
        while (end > 0 && (utf8[end] & 0xC0) == 0x80) {
            end--; // step back to the start of the cut character
        }
        return new String(utf8, 0, end, StandardCharsets.UTF_8);
    }
}
