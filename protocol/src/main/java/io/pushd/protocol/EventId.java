package io.pushd.protocol;

import java.util.regex.Pattern;

/**
 * An event ID {@code <epoch>-<seq>}. The epoch names one history (one data directory); the
 * sequence starts at 1 in each topic and grows by one per event. Clients treat IDs as opaque and
 * only hand them back; the server parses them to decide between replay and {@code reset}.
 *
 * <p>{@code <epoch>-0} is valid and means "before the first event of the topic".
 */
public record EventId(String epoch, long seq) {

    private static final Pattern EPOCH = Pattern.compile("[0-9a-z]{1,32}");
    /** Longest accepted textual form; keeps hostile input from costing anything. */
    public static final int MAX_LENGTH = 64;

    public EventId {
        if (epoch == null || !EPOCH.matcher(epoch).matches()) {
            throw new IllegalArgumentException("epoch: " + epoch + " (expected: 1-32 characters of [0-9a-z])");
        }
        if (seq < 0) {
            throw new IllegalArgumentException("seq: " + seq + " (expected: >= 0)");
        }
    }

    /** Parses {@code <epoch>-<seq>}; throws {@link IllegalArgumentException} with a readable reason. */
    public static EventId parse(String text) {
        if (text == null || text.isEmpty() || text.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("invalid event id (expected: <epoch>-<seq>)");
        }
        int dash = text.lastIndexOf('-');
        if (dash <= 0 || dash == text.length() - 1) {
            throw new IllegalArgumentException("invalid event id '" + text + "' (expected: <epoch>-<seq>)");
        }
        String seqText = text.substring(dash + 1);
        for (int i = 0; i < seqText.length(); i++) {
            if (seqText.charAt(i) < '0' || seqText.charAt(i) > '9') {
                throw new IllegalArgumentException("invalid event id '" + text + "' (expected: <epoch>-<seq>)");
            }
        }
        long seq;
        try {
            seq = Long.parseLong(seqText);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid event id '" + text + "' (sequence out of range)");
        }
        String epoch = text.substring(0, dash);
        if (!EPOCH.matcher(epoch).matches()) {
            throw new IllegalArgumentException("invalid event id '" + text + "' (expected: <epoch>-<seq>)");
        }
        return new EventId(epoch, seq);
    }

    @Override
    public String toString() {
        return epoch + '-' + seq;
    }
}
