package io.pushd.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The event-stream parser against the standard's rules, fed as a network would feed it. */
class SseParserTest {

    record Message(String type, String data, String id) {
    }

    final List<Message> messages = new ArrayList<>();
    final List<Long> retries = new ArrayList<>();
    final List<String> comments = new ArrayList<>();
    final SseParser parser = new SseParser(new SseParser.Handler() {
        @Override
        public void onMessage(String type, String data, String lastEventId) {
            messages.add(new Message(type, data, lastEventId));
        }

        @Override
        public void onRetry(long millis) {
            retries.add(millis);
        }

        @Override
        public void onComment(String text) {
            comments.add(text);
        }
    }, 1024);

    private void feed(byte[] bytes) {
        ByteBuf b = Unpooled.wrappedBuffer(bytes);
        try {
            parser.feed(b);
            assertThat(b.isReadable()).as("the parser consumes every byte it is given").isFalse();
        } finally {
            b.release();
        }
    }

    private void feed(String s) {
        feed(s.getBytes(StandardCharsets.UTF_8));
    }

    private static final String STREAM = "retry: 3172\n\n"
            + "event: subscribed\nid: E-41\ndata: {\"type\":\"subscribed\",\"topic\":\"news\"}\n\n"
            + "id: E-42\ndata: {\"type\":\"event\",\"id\":\"E-42\",\"data\":{\"title\":\"h\u00e9llo \u20ac\"}}\n\n"
            + ": ping\n\n"
            + "retry: 2210\nevent: close\ndata: {\"code\":1012,\"retryMs\":2210}\n\n";

    private void assertTheWholeStream() {
        assertThat(retries).containsExactly(3172L, 2210L);
        assertThat(comments).containsExactly("ping");
        assertThat(messages).containsExactly(
                new Message("subscribed", "{\"type\":\"subscribed\",\"topic\":\"news\"}", "E-41"),
                new Message("message", "{\"type\":\"event\",\"id\":\"E-42\",\"data\":{\"title\":\"h\u00e9llo \u20ac\"}}",
                        "E-42"),
                new Message("close", "{\"code\":1012,\"retryMs\":2210}", "E-42"));
    }

    @Test
    void theServersStreamInOneChunkGivesRetriesCommentsAndMessagesWithTheirTypeAndId() {
        feed(STREAM);
        assertTheWholeStream();
    }

    @Test
    void theSameStreamSplitAfterEveryByteGivesTheSameMessagesAndMultiByteCharactersSurviveTheSplit() {
        for (byte b : STREAM.getBytes(StandardCharsets.UTF_8)) {
            feed(new byte[] {b});
        }
        assertTheWholeStream();
    }

    @Test
    void crlfAndLoneCrEndLinesAsLfDoesAndACrlfSplitAcrossChunksIsOneLineEnd() {
        feed("id: 1\r\ndata: a\r");
        feed("\ndata: b\r\r"); // CR LF across the chunks, then CR CR: a line and the empty line
        feed("data: c\r\n\r\n");
        assertThat(messages).containsExactly(new Message("message", "a\nb", "1"), new Message("message", "c", "1"));
    }

    @Test
    void severalDataLinesJoinWithNewlinesAndOnlyOneSpaceAfterTheColonIsDropped() {
        feed("data:no space\ndata:  two spaces\ndata\ndata: last\n\n");
        assertThat(messages).containsExactly(new Message("message", "no space\n two spaces\n\nlast", ""));
    }

    @Test
    void aMessageWithoutDataIsNotDispatchedButItsIdIsKeptAndItsEventTypeIsNot() {
        feed("event: subscribed\nid: E-7\n\ndata: x\n\n");
        assertThat(messages).containsExactly(new Message("message", "x", "E-7"));
        assertThat(parser.lastEventId()).isEqualTo("E-7");
    }

    @Test
    void anUnfinishedMessageWaitsForItsEmptyLine() {
        feed("data: half");
        feed("\ndata: more\n");
        assertThat(messages).isEmpty();
        feed("\n");
        assertThat(messages).containsExactly(new Message("message", "half\nmore", ""));
    }

    @Test
    void invalidRetryValuesAndUnknownFieldsAreIgnoredAndALeadingBomIsSkipped() {
        feed("\uFEFFretry: 12a\nretry: -5\nretry:\nretry: 250\nfoo: bar\ndata: ok\n\n");
        assertThat(retries).containsExactly(250L);
        assertThat(messages).containsExactly(new Message("message", "ok", ""));
    }

    @Test
    void commentsAreReportedAndDoNotEndOrChangeAMessage() {
        feed(":\n: ping\ndata: a\n: in between\ndata: b\n\n");
        assertThat(comments).containsExactly("", "ping", "in between");
        assertThat(messages).containsExactly(new Message("message", "a\nb", ""));
    }

    @Test
    void aMessageLargerThanTheLimitFailsTheStreamInsteadOfGrowingWithoutBound() {
        assertThatThrownBy(() -> feed("data: " + "x".repeat(2000) + "\n\n"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("1024");
    }

    @Test
    void theLimitCountsOneMessageSoAManySmallMessagesNeverHitIt() {
        for (int i = 0; i < 100; i++) {
            feed("id: " + i + "\ndata: " + "y".repeat(100) + "\n\n");
        }
        assertThat(messages).hasSize(100);
    }
}
