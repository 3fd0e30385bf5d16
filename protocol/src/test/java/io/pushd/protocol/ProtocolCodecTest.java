package io.pushd.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ProtocolCodecTest {

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String canonical(String body) {
        return new String(ProtocolCodec.canonicalData(utf8(body)), StandardCharsets.UTF_8);
    }

    private static ProtocolException canonicalFailure(String body) {
        return catchThrowableOfType(ProtocolException.class, () -> ProtocolCodec.canonicalData(utf8(body)));
    }

    private static ProtocolException clientFailure(String frame) {
        return catchThrowableOfType(ProtocolException.class, () -> ProtocolCodec.decodeClient(frame));
    }

    private static JsonNode json(byte[] bytes) throws Exception {
        return ProtocolCodec.mapper().readTree(bytes);
    }

    // canonicalData

    @Test
    void canonicalDataRemovesInsignificantWhitespace() {
        assertThat(canonical(" {\n  \"a\" : [ 1, 2 ],\t\"b\" : { \"c\" : \"x y\" } }\n"))
                .isEqualTo("{\"a\":[1,2],\"b\":{\"c\":\"x y\"}}");
    }

    @Test
    void canonicalDataAcceptsAnyOneJsonValue() {
        assertThat(canonical(" 42 ")).isEqualTo("42");
        assertThat(canonical("\"hi\"")).isEqualTo("\"hi\"");
        assertThat(canonical("null")).isEqualTo("null");
        assertThat(canonical("[ ]")).isEqualTo("[]");
    }

    @Test
    void canonicalDataKeepsNonAsciiTextIntact() throws Exception {
        String bmp = "{\"name\":\"caf\u00e9 \u65e5\u672c\"}";
        String astral = "{\"name\":\"\uD83D\uDE00\"}";

        assertThat(canonical(bmp)).isEqualTo(bmp);
        // a character outside the BMP stays its 4 UTF-8 bytes (not a 12-byte escaped pair)
        assertThat(canonical(astral)).isEqualTo(astral);
        assertThat(ProtocolCodec.canonicalData(utf8(astral))).hasSize(utf8(astral).length);
    }

    @Test
    void canonicalDataRefusesTwoEqualKeysInAnObjectRatherThanDropOne() {
        ProtocolException e = canonicalFailure("{\"a\":1,\"b\":{\"c\":1,\"c\":2}}");

        assertThat(e.code()).isEqualTo(ErrorCodes.BAD_JSON);
        assertThat(canonical("{\"a\":{\"c\":1},\"b\":{\"c\":2}}")).as("the same key in two objects")
                .isEqualTo("{\"a\":{\"c\":1},\"b\":{\"c\":2}}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"1e2147483648", "{\"price\":1e9999999999}", "1e-2147483648", "[0.5E+99999999999999]"})
    void canonicalDataRefusesANumberWhoseExponentIsOutOfRangeAsBadJson(String body) {
        ProtocolException e = canonicalFailure(body);

        assertThat(e.code()).isEqualTo(ErrorCodes.BAD_JSON);
        assertThat(e).hasMessageContaining("exponent");
    }

    @Test
    void canonicalDataKeepsEveryDigitOfADecimalNumber() {
        assertThat(canonical("{\"x\": 0.30000000000000004441}")).isEqualTo("{\"x\":0.30000000000000004441}");
        assertThat(canonical("[1.50, 12345678901234567890.123456789]"))
                .isEqualTo("[1.50,12345678901234567890.123456789]");
    }

    @Test
    void canonicalDataKeepsANumberBeyondDoubleRangeANumber() throws Exception {
        JsonNode x = json(utf8(canonical("{\"x\":1e400}"))).path("x");

        assertThat(x.isNumber()).as("1e400 must stay a JSON number, got %s", x).isTrue();
    }

    @Test
    void canonicalDataRejectsTrailingGarbage() {
        ProtocolException e = canonicalFailure("{} x");

        assertThat(e.code()).isEqualTo(ErrorCodes.BAD_JSON);
    }

    @Test
    void canonicalDataRejectsASecondValue() {
        assertThat(canonicalFailure("{} {}").code()).isEqualTo(ErrorCodes.BAD_JSON);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "\n"})
    void canonicalDataRejectsAnEmptyBody(String body) {
        ProtocolException e = canonicalFailure(body);

        assertThat(e.code()).isEqualTo(ErrorCodes.BAD_JSON);
        assertThat(e).hasMessageContaining("empty");
    }

    @ParameterizedTest
    @ValueSource(strings = {"{", "{\"a\":}", "{a:1}", "'x'", "[1,]", "tru", "{\"a\":1,}"})
    void canonicalDataRejectsInvalidJson(String body) {
        ProtocolException e = canonicalFailure(body);

        assertThat(e.code()).isEqualTo(ErrorCodes.BAD_JSON);
        assertThat(e).hasMessageStartingWith("body is not valid JSON");
        assertPlainWords(e);
    }

    @Test
    void canonicalDataAcceptsNestingUpToTwoHundredLevels() {
        String body = "[".repeat(200) + "]".repeat(200);

        assertThat(canonical(body)).isEqualTo(body);
    }

    @Test
    void canonicalDataRejectsNestingDeeperThanTwoHundredLevels() {
        String body = "[".repeat(201) + "]".repeat(201);

        assertThat(canonicalFailure(body).code()).isEqualTo(ErrorCodes.BAD_JSON);
    }

    @Test
    void canonicalDataRejectsVeryDeepNestingWithoutStackOverflow() {
        String body = "[".repeat(100_000);

        assertThat(canonicalFailure(body).code()).isEqualTo(ErrorCodes.BAD_JSON);
    }

    // error messages: our own words, never Jackson's class, method or feature names

    private static void assertPlainWords(ProtocolException e) {
        assertThat(e.getMessage()).doesNotContain("com.fasterxml", "Jackson", "jackson", "JsonReadFeature",
                "StreamReadConstraints", "DeserializationFeature", "JsonNode", "()", "`");
    }

    @Test
    void tooDeepNestingIsDescribedByItsLimit() {
        ProtocolException e = canonicalFailure("[".repeat(201) + "]".repeat(201));

        assertThat(e).hasMessage("body is JSON nested deeper than 200 levels");
        assertPlainWords(e);
    }

    @Test
    void trailingDataIsDescribedAsMoreThanOneValue() {
        ProtocolException e = canonicalFailure("{\"a\":1} [2]");

        assertThat(e).hasMessage("body is not a single JSON value (more follows at line 1, column 9)");
        assertPlainWords(e);
    }

    @ParameterizedTest
    @ValueSource(strings = {"NaN", "[NaN]", "{\"x\":-Infinity}", "[01]", "{\"a\":'x'}", "{a:1}", "[1,]",
        "\"tab\tin a string\"", "[\"\u0001\"]", "/* comment */ 1", "#1", "[+1]", "[.5]", "not json", "tru"})
    void invalidJsonIsDescribedByWhereItBreaks(String body) {
        ProtocolException e = canonicalFailure(body);

        assertThat(e.code()).isEqualTo(ErrorCodes.BAD_JSON);
        assertThat(e.getMessage()).matches("body is not valid JSON at line \\d+, column \\d+");
        assertPlainWords(e);
    }

    @Test
    void bodyCutShortIsDescribedAsEndingEarly() {
        ProtocolException e = canonicalFailure("{\"a\":[1,2");

        assertThat(e).hasMessage("body is not valid JSON: it ends in the middle of a value");
    }

    @Test
    void overlongNumberAndFieldNameAreDescribedByTheirLimits() {
        ProtocolException number = canonicalFailure("[" + "1".repeat(1001) + "]");
        ProtocolException name = canonicalFailure("{\"" + "n".repeat(50_001) + "\":1}");

        assertThat(number).hasMessageStartingWith("body has a JSON number longer than 1000 characters");
        assertThat(name).hasMessageStartingWith("body has a JSON field name longer than 50000 characters");
        assertPlainWords(number);
        assertPlainWords(name);
    }

    @ParameterizedTest
    @ValueSource(strings = {"NaN", "{\"type\":\"subscribe\",\"topic\":\"a\"} x", "{\"after\":01}", "{type:1}",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            + "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            + "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["})
    void unreadableClientMessagesAreDescribedInPlainWords(String frame) {
        ProtocolException e = clientFailure(frame);

        assertThat(e.code()).isEqualTo(ErrorCodes.BAD_JSON);
        assertThat(e).hasMessageStartingWith("message ");
        assertPlainWords(e);
    }

    // encodeEvent

    @Test
    void encodedEventParsesBackToItsFields() throws Exception {
        byte[] data = ProtocolCodec.canonicalData(utf8("{ \"n\" : 1, \"s\" : \"\u00e9\" }"));

        byte[] frame = ProtocolCodec.encodeEvent("orders:eu", new EventId("ep1", 17), 1_800_000_000_123L, data);

        JsonNode node = json(frame);
        assertThat(node.path("type").asText()).isEqualTo("event");
        assertThat(node.path("topic").asText()).isEqualTo("orders:eu");
        assertThat(node.path("id").asText()).isEqualTo("ep1-17");
        assertThat(node.path("ts").asLong()).isEqualTo(1_800_000_000_123L);
        assertThat(node.path("data")).isEqualTo(json(data));
    }

    @Test
    void encodedEventEmbedsTheDataBytesVerbatim() {
        byte[] data = ProtocolCodec.canonicalData(utf8("{\"price\":1.50,\"big\":123456789012345678901234567890}"));

        String frame = new String(ProtocolCodec.encodeEvent("t", new EventId("ep1", 1), 5, data),
                StandardCharsets.UTF_8);

        assertThat(frame).endsWith(",\"data\":" + new String(data, StandardCharsets.UTF_8) + "}");
        assertThat(frame).isEqualTo("{\"type\":\"event\",\"topic\":\"t\",\"id\":\"ep1-1\",\"ts\":5,\"data\":"
                + new String(data, StandardCharsets.UTF_8) + "}");
    }

    @Test
    void encodedEventDecodesAsAServerEvent() throws Exception {
        byte[] data = utf8("[1,\"two\",{\"three\":3}]");

        ServerMessage m = ProtocolCodec.decodeServer(new String(
                ProtocolCodec.encodeEvent("t", new EventId("ep1", 3), 99, data), StandardCharsets.UTF_8));

        assertThat(m).isEqualTo(new ServerMessage.Event("t", new EventId("ep1", 3), 99, json(data)));
    }

    // decodeClient

    @Test
    void subscribeWithoutAfterIsLiveOnly() {
        assertThat(ProtocolCodec.decodeClient("{\"type\":\"subscribe\",\"topic\":\"news\"}"))
                .isEqualTo(new ClientMessage.Subscribe("news", null));
    }

    @Test
    void subscribeWithNullOrEmptyAfterIsLiveOnly() {
        assertThat(ProtocolCodec.decodeClient("{\"type\":\"subscribe\",\"topic\":\"news\",\"after\":null}"))
                .isEqualTo(new ClientMessage.Subscribe("news", null));
        assertThat(ProtocolCodec.decodeClient("{\"type\":\"subscribe\",\"topic\":\"news\",\"after\":\"\"}"))
                .isEqualTo(new ClientMessage.Subscribe("news", null));
    }

    @Test
    void subscribeWithAfterResumesAfterThatId() {
        assertThat(ProtocolCodec.decodeClient("{\"type\":\"subscribe\",\"topic\":\"news\",\"after\":\"ep1-9\"}"))
                .isEqualTo(new ClientMessage.Subscribe("news", new EventId("ep1", 9)));
    }

    @Test
    void unsubscribeDecodes() {
        assertThat(ProtocolCodec.decodeClient("{\"type\":\"unsubscribe\",\"topic\":\"news\"}"))
                .isEqualTo(new ClientMessage.Unsubscribe("news"));
    }

    @Test
    void clientMessagesRoundTripThroughEncode() {
        for (ClientMessage m : new ClientMessage[] {new ClientMessage.Subscribe("a", null),
                new ClientMessage.Subscribe("a", new EventId("ep1", 0)), new ClientMessage.Unsubscribe("b")}) {
            assertThat(ProtocolCodec.decodeClient(ProtocolCodec.encode(m))).isEqualTo(m);
        }
    }

    @Test
    void unknownTypeIsABadMessage() {
        ProtocolException e = clientFailure("{\"type\":\"publish\",\"topic\":\"news\"}");

        assertThat(e.code()).isEqualTo(ErrorCodes.BAD_MESSAGE);
        assertThat(e).hasMessageContaining("subscribe, unsubscribe");
    }

    @Test
    void missingOrNonStringTypeIsABadMessage() {
        assertThat(clientFailure("{\"topic\":\"news\"}").code()).isEqualTo(ErrorCodes.BAD_MESSAGE);
        assertThat(clientFailure("{\"type\":1,\"topic\":\"news\"}").code()).isEqualTo(ErrorCodes.BAD_MESSAGE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"[]", "\"subscribe\"", "42", "null"})
    void nonObjectFrameIsABadMessage(String frame) {
        ProtocolException e = clientFailure(frame);

        assertThat(e.code()).isEqualTo(ErrorCodes.BAD_MESSAGE);
        assertThat(e).hasMessageContaining("JSON object");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "\n"})
    void anEmptyOrBlankFrameIsBadJson(String frame) {
        ProtocolException e = clientFailure(frame);

        assertThat(e.code()).isEqualTo(ErrorCodes.BAD_JSON);
        assertThat(e).hasMessageContaining("empty");
    }

    @Test
    void frameThatIsNotJsonIsBadJson() {
        assertThat(clientFailure("{type:subscribe").code()).isEqualTo(ErrorCodes.BAD_JSON);
        assertThat(clientFailure("{\"type\":\"subscribe\",\"topic\":\"a\"} x").code())
                .isEqualTo(ErrorCodes.BAD_JSON);
    }

    @Test
    void badTopicIsInvalidTopic() {
        assertThat(clientFailure("{\"type\":\"subscribe\",\"topic\":\"a b\"}").code())
                .isEqualTo(ErrorCodes.INVALID_TOPIC);
        assertThat(clientFailure("{\"type\":\"unsubscribe\",\"topic\":\"\"}").code())
                .isEqualTo(ErrorCodes.INVALID_TOPIC);
    }

    @Test
    void missingTopicIsABadMessage() {
        assertThat(clientFailure("{\"type\":\"subscribe\"}").code()).isEqualTo(ErrorCodes.BAD_MESSAGE);
    }

    @ParameterizedTest
    @ValueSource(strings = {"5", "true", "{}", "[\"ep1-1\"]"})
    void afterThatIsNotAStringIsInvalidId(String after) {
        ProtocolException e = clientFailure("{\"type\":\"subscribe\",\"topic\":\"a\",\"after\":" + after + "}");

        assertThat(e.code()).isEqualTo(ErrorCodes.INVALID_ID);
    }

    @Test
    void malformedAfterIsInvalidId() {
        assertThat(clientFailure("{\"type\":\"subscribe\",\"topic\":\"a\",\"after\":\"nope\"}").code())
                .isEqualTo(ErrorCodes.INVALID_ID);
    }

    // decodeServer

    @Test
    void subscribedRoundTripsWithAndWithoutHead() {
        ServerMessage full = new ServerMessage.Subscribed("t", new EventId("ep1", 9), new EventId("ep1", 2), "ep1");
        ServerMessage empty = new ServerMessage.Subscribed("t", null, null, "ep1");

        assertThat(ProtocolCodec.decodeServer(ProtocolCodec.encode(full))).isEqualTo(full);
        assertThat(ProtocolCodec.decodeServer(ProtocolCodec.encode(empty))).isEqualTo(empty);
    }

    @Test
    void subscribedCarriesThePositionItStartsFromAsId() {
        ServerMessage m = new ServerMessage.Subscribed("t", new EventId("ep1", 9), new EventId("ep1", 2), "ep1",
                new EventId("ep1", 5));

        String wire = ProtocolCodec.encode(m);

        assertThat(wire).contains("\"id\":\"ep1-5\"");
        assertThat(ProtocolCodec.decodeServer(wire)).isEqualTo(m);
    }

    @Test
    void subscribedFromAServerWithoutTheIdDecodesWithANullId() {
        ServerMessage m = ProtocolCodec.decodeServer(
                "{\"type\":\"subscribed\",\"topic\":\"t\",\"head\":null,\"oldest\":null,\"epoch\":\"ep1\"}");

        assertThat(((ServerMessage.Subscribed) m).id()).isNull();
    }

    @Test
    void eventRoundTrips() throws Exception {
        ServerMessage m = new ServerMessage.Event("t", new EventId("ep1", 4), 1234,
                json(utf8("{\"a\":[1,2,{\"b\":null}]}")));

        assertThat(ProtocolCodec.decodeServer(ProtocolCodec.encode(m))).isEqualTo(m);
    }

    @Test
    void resetRoundTripsForEveryReason() {
        for (ResetReason r : ResetReason.values()) {
            ServerMessage m = new ServerMessage.Reset("t", new EventId("ep2", 11), r);

            assertThat(ProtocolCodec.decodeServer(ProtocolCodec.encode(m))).isEqualTo(m);
        }
    }

    @Test
    void errorRoundTrips() {
        ServerMessage m = new ServerMessage.Error(ErrorCodes.INVALID_TOPIC, "invalid topic \"x y\"");

        assertThat(ProtocolCodec.decodeServer(ProtocolCodec.encode(m))).isEqualTo(m);
    }

    @Test
    void unknownServerTypeIsABadMessage() {
        ProtocolException e = catchThrowableOfType(ProtocolException.class,
                () -> ProtocolCodec.decodeServer("{\"type\":\"hello\"}"));

        assertThat(e.code()).isEqualTo(ErrorCodes.BAD_MESSAGE);
    }
}
