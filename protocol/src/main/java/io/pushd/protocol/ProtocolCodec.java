package io.pushd.protocol;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** JSON encoding and decoding of protocol v1 messages. Thread-safe. */
public final class ProtocolCodec {

    private static final ObjectMapper MAPPER = newMapper();
    /**
     * Reads published bodies keeping decimals exact: as doubles, {@code 0.30000000000000004441}
     * would lose digits and {@code 1e400} would turn into the string {@code "Infinity"}.
     */
    private static final ObjectReader EXACT_READER = MAPPER.reader()
            .with(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .without(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
            // a tree keeps one of two equal keys: the other would be dropped without a word
            .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private ProtocolCodec() {
    }

    /** A mapper that rejects trailing tokens and very deep nesting, shared by both sides. */
    public static ObjectMapper newMapper() {
        JsonFactory factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(200).build())
                // a character outside the BMP as its 4 UTF-8 bytes, not a 12-byte escaped pair: an
                // event stays about the size it was published at (limits.maxPublishBytes)
                .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
                .build();
        return new ObjectMapper(factory).enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /**
     * Validates a published body and returns it in compact form, so it can be embedded verbatim
     * in event frames. Throws {@link ProtocolException} for anything that is not one JSON value.
     */
    public static byte[] canonicalData(byte[] body) {
        JsonNode node;
        try {
            node = EXACT_READER.readTree(body);
        } catch (IOException e) {
            throw new ProtocolException(ErrorCodes.BAD_JSON, "body " + describe(e));
        } catch (NumberFormatException | ArithmeticException e) {
            // well-formed, but past what a decimal holds: an exponent beyond 32 bits (1e2147483648)
            throw new ProtocolException(ErrorCodes.BAD_JSON, "body has a number whose exponent is out of range");
        }
        if (node == null || node.isMissingNode()) {
            throw new ProtocolException(ErrorCodes.BAD_JSON, "body is empty (expected: one JSON value)");
        }
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The event frame, built from already-valid JSON {@code data} without parsing it again. The
     * server calls this once per event and shares the bytes among all subscribers.
     */
    public static byte[] encodeEvent(String topic, EventId id, long ts, byte[] data) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(data.length + topic.length() + 80);
        try (JsonGenerator g = MAPPER.getFactory().createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("type", "event");
            g.writeStringField("topic", topic);
            g.writeStringField("id", id.toString());
            g.writeNumberField("ts", ts);
            g.writeFieldName("data");
            g.writeRawValue(new String(data, StandardCharsets.UTF_8));
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    public static String encode(ServerMessage message) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        try {
            encode(message, out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * {@link #encode(ServerMessage)} as UTF-8 into {@code out} (which it closes), written field by
     * field: the server sends one per subscription and error, and a tree and a String per message
     * were most of a handshake's garbage.
     */
    public static void encode(ServerMessage message, OutputStream out) throws IOException {
        try (JsonGenerator g = MAPPER.getFactory().createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("type", message.type());
            if (message instanceof ServerMessage.Subscribed s) {
                g.writeStringField("topic", s.topic());
                g.writeStringField("head", s.head() == null ? null : s.head().toString());
                g.writeStringField("oldest", s.oldest() == null ? null : s.oldest().toString());
                g.writeStringField("epoch", s.epoch());
                if (s.id() != null) {
                    g.writeStringField("id", s.id().toString());
                }
            } else if (message instanceof ServerMessage.Event e) {
                g.writeStringField("topic", e.topic());
                g.writeStringField("id", e.id().toString());
                g.writeNumberField("ts", e.ts());
                g.writeFieldName("data");
                if (e.data() == null) {
                    g.writeNull();
                } else {
                    g.writeTree(e.data());
                }
            } else if (message instanceof ServerMessage.Reset r) {
                g.writeStringField("topic", r.topic());
                g.writeStringField("id", r.id().toString());
                g.writeStringField("reason", r.reason().wireName());
            } else if (message instanceof ServerMessage.Error err) {
                g.writeStringField("code", err.code());
                if (err.topic() != null) {
                    g.writeStringField("topic", err.topic());
                }
                g.writeStringField("message", err.message());
            } else if (message instanceof ServerMessage.Authenticated a) {
                g.writeFieldName("expiresAt");
                if (a.expiresAt() == null) {
                    g.writeNull();
                } else {
                    g.writeNumber(a.expiresAt());
                }
            }
            g.writeEndObject();
        }
    }

    public static String encode(ClientMessage message) {
        var node = MAPPER.createObjectNode();
        if (message instanceof ClientMessage.Subscribe s) {
            node.put("type", "subscribe");
            node.put("topic", s.topic());
            if (s.after() != null) {
                node.put("after", s.after().toString());
            }
        } else if (message instanceof ClientMessage.Unsubscribe u) {
            node.put("type", "unsubscribe");
            node.put("topic", u.topic());
        } else if (message instanceof ClientMessage.Auth a) {
            node.put("type", "auth");
            node.put("token", a.token());
        }
        return node.toString();
    }

    /** Decodes a client frame; throws {@link ProtocolException} with a wire error code. */
    public static ClientMessage decodeClient(String text) {
        JsonNode node = readObject(text);
        String type = text(node, "type");
        if (type.equals("auth")) {
            JsonNode token = node.get("token");
            if (token == null || !token.isTextual() || token.asText().isEmpty()) {
                // never quote the frame: it is a token, or near one
                throw new ProtocolException(ErrorCodes.BAD_MESSAGE, "'token' must be a non-empty string");
            }
            return new ClientMessage.Auth(token.asText());
        }
        String topic = text(node, "topic");
        if (!TopicName.isValid(topic)) {
            throw new ProtocolException(ErrorCodes.INVALID_TOPIC,
                    "invalid topic (expected: 1-200 characters of [A-Za-z0-9_.:-])");
        }
        switch (type) {
            case "subscribe": {
                JsonNode after = node.get("after");
                EventId id = null;
                if (after != null && !after.isNull()) {
                    if (!after.isTextual()) {
                        throw new ProtocolException(ErrorCodes.INVALID_ID, "'after' must be a string");
                    }
                    if (!after.asText().isEmpty()) {
                        try {
                            id = EventId.parse(after.asText());
                        } catch (IllegalArgumentException e) {
                            throw new ProtocolException(ErrorCodes.INVALID_ID, e.getMessage());
                        }
                    }
                }
                return new ClientMessage.Subscribe(topic, id);
            }
            case "unsubscribe":
                return new ClientMessage.Unsubscribe(topic);
            default:
                throw new ProtocolException(ErrorCodes.BAD_MESSAGE,
                        "unknown message type (expected: subscribe, unsubscribe, auth)");
        }
    }

    /** Decodes a server frame (used by clients). */
    public static ServerMessage decodeServer(String text) {
        JsonNode node = readObject(text);
        String type = text(node, "type");
        switch (type) {
            case "subscribed":
                return new ServerMessage.Subscribed(text(node, "topic"), optionalId(node, "head"),
                        optionalId(node, "oldest"), node.path("epoch").isTextual() ? node.get("epoch").asText() : null,
                        optionalId(node, "id"));
            case "event":
                return new ServerMessage.Event(text(node, "topic"), EventId.parse(text(node, "id")),
                        node.path("ts").asLong(), node.get("data"));
            case "reset":
                return new ServerMessage.Reset(text(node, "topic"), EventId.parse(text(node, "id")),
                        ResetReason.fromWire(text(node, "reason")));
            case "error":
                return new ServerMessage.Error(text(node, "code"), text(node, "message"),
                        node.path("topic").isTextual() ? node.get("topic").asText() : null);
            case "authenticated":
                return new ServerMessage.Authenticated(node.path("expiresAt").isNumber()
                        ? node.get("expiresAt").asLong() : null);
            default:
                throw new ProtocolException(ErrorCodes.BAD_MESSAGE, "unknown server message type: " + type);
        }
    }

    private static JsonNode readObject(String text) {
        JsonNode node;
        try {
            node = MAPPER.readTree(text);
        } catch (IOException e) {
            throw new ProtocolException(ErrorCodes.BAD_JSON, "message " + describe(e));
        }
        if (node == null || node.isMissingNode()) { // Jackson reads an empty or blank text as no value
            throw new ProtocolException(ErrorCodes.BAD_JSON, "message is empty (expected a JSON object)");
        }
        if (node.getNodeType() != JsonNodeType.OBJECT) {
            throw new ProtocolException(ErrorCodes.BAD_MESSAGE, "frame must be a JSON object");
        }
        return node;
    }

    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual()) {
            throw new ProtocolException(ErrorCodes.BAD_MESSAGE, "missing or non-string field '" + field + "'");
        }
        return v.asText();
    }

    private static EventId optionalId(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v == null || v.isNull() ? null : EventId.parse(v.asText());
    }

    /**
     * What is wrong with unreadable JSON, in this protocol's words: Jackson's own messages name its
     * classes and switches ({@code JsonReadFeature}, {@code StreamReadConstraints...()}), which mean
     * nothing to a client and tell an attacker what runs here.
     */
    private static String describe(IOException e) {
        JsonLocation at = e instanceof JsonProcessingException jpe ? jpe.getLocation() : null;
        if (e instanceof StreamConstraintsException sce) {
            // Jackson tells the limits apart only in its message text
            String m = String.valueOf(sce.getOriginalMessage());
            StreamReadConstraints limits = MAPPER.getFactory().streamReadConstraints();
            if (m.contains("nesting")) {
                return "is JSON nested deeper than " + limits.getMaxNestingDepth() + " levels" + where(at);
            }
            if (m.startsWith("Number")) {
                return "has a JSON number longer than " + limits.getMaxNumberLength() + " characters" + where(at);
            }
            if (m.startsWith("Name")) {
                return "has a JSON field name longer than " + limits.getMaxNameLength() + " characters" + where(at);
            }
            return "is JSON over a size limit" + where(at);
        }
        if (e instanceof MismatchedInputException) {
            // the only one readTree raises: FAIL_ON_TRAILING_TOKENS
            return "is not a single JSON value (more follows" + where(at) + ")";
        }
        if (e instanceof JsonEOFException) {
            return "is not valid JSON: it ends in the middle of a value";
        }
        return "is not valid JSON" + where(at);
    }

    private static String where(JsonLocation at) {
        return at == null || at.getLineNr() < 1 ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
    }
}
