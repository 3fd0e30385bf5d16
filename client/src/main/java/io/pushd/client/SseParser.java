package io.pushd.client;

import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The {@code text/event-stream} parser of the HTML standard ("Interpreting an event stream"),
 * fed the body as it arrives: a line or a message may be split across any number of chunks,
 * lines end with LF, CR or CRLF (a CR at the end of one chunk and the LF at the start of the
 * next are one line end), and bytes are decoded as UTF-8 per line, so a character split across
 * chunks is decoded whole.
 *
 * <p>Not thread-safe: one parser per stream, fed on its event loop.
 */
final class SseParser {

    /** What the stream says, in order. */
    interface Handler {

        /** A message ended by an empty line; {@code type} is {@code "message"} without an {@code event:} line. */
        void onMessage(String type, String data, String lastEventId);

        /** A valid {@code retry:} field (ASCII digits only), at once, not at the message's end. */
        default void onRetry(long millis) {
        }

        /** A comment line ({@code : ping}); {@code text} is what follows the colon. */
        default void onComment(String text) {
        }
    }

    private final Handler handler;
    private final int maxMessageBytes;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
    private final StringBuilder data = new StringBuilder();
    private String eventType = "";
    private String lastEventId = "";
    private boolean afterCr;
    private boolean firstLine = true;
    private int messageBytes;

    /** @param maxMessageBytes the largest message (all its lines) accepted; larger fails the stream */
    SseParser(Handler handler, int maxMessageBytes) {
        this.handler = handler;
        this.maxMessageBytes = maxMessageBytes;
    }

    /** The last {@code id:} seen (kept across messages, as the standard says); empty before. */
    String lastEventId() {
        return lastEventId;
    }

    /**
     * Parses every complete line in {@code chunk} (read, not released) and keeps the rest.
     *
     * @throws MessageTooLargeException when a message grows beyond the limit
     */
    void feed(ByteBuf chunk) {
        int end = chunk.writerIndex();
        for (int i = chunk.readerIndex(); i < end; i++) {
            byte b = chunk.getByte(i);
            if (b == '\n') {
                if (afterCr) {
                    afterCr = false; // the LF of a CRLF
                } else {
                    endLine();
                }
            } else if (b == '\r') {
                afterCr = true;
                endLine();
            } else {
                afterCr = false;
                if (++messageBytes > maxMessageBytes) {
                    throw new MessageTooLargeException("event-stream message larger than " + maxMessageBytes + " bytes");
                }
                line.write(b);
            }
        }
        chunk.readerIndex(end);
    }

    private void endLine() {
        String s = line.toString(StandardCharsets.UTF_8);
        line.reset();
        if (firstLine) {
            firstLine = false;
            if (!s.isEmpty() && s.charAt(0) == '\uFEFF') {
                s = s.substring(1); // one leading BOM is allowed and ignored
            }
        }
        if (s.isEmpty()) {
            dispatch();
            return;
        }
        int colon = s.indexOf(':');
        if (colon == 0) {
            handler.onComment(s.substring(1).stripLeading());
            return;
        }
        String field = colon < 0 ? s : s.substring(0, colon);
        String value = "";
        if (colon > 0) {
            int from = colon + 1;
            value = s.substring(from < s.length() && s.charAt(from) == ' ' ? from + 1 : from);
        }
        switch (field) {
            case "event" -> eventType = value;
            case "data" -> data.append(value).append('\n');
            case "id" -> {
                if (value.indexOf('\0') < 0) {
                    lastEventId = value;
                }
            }
            case "retry" -> {
                if (!value.isEmpty() && value.length() <= 18 && value.chars().allMatch(c -> c >= '0' && c <= '9')) {
                    handler.onRetry(Long.parseLong(value));
                }
            }
            default -> {
                // unknown fields are ignored, as the standard says
            }
        }
    }

    private void dispatch() {
        messageBytes = 0;
        if (data.length() == 0) {
            eventType = ""; // a message without data is not dispatched (an id: alone still counts)
            return;
        }
        data.setLength(data.length() - 1); // the last data line's LF
        String type = eventType.isEmpty() ? "message" : eventType;
        String d = data.toString();
        data.setLength(0);
        eventType = "";
        handler.onMessage(type, d, lastEventId);
    }

    /** A message over {@code maxFrameBytes}: the stream cannot go past it. */
    static final class MessageTooLargeException extends IllegalStateException {
        MessageTooLargeException(String message) {
            super(message);
        }
    }
}
