package io.pushd.server.config;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Builds the effective configuration: the defaults, then the YAML file, then overrides (CLI flags
 * and {@code PUSH_*} environment variables), each layer replacing single keys of the one below.
 * Unknown keys, wrong types and out-of-range values throw {@link ConfigException} naming the key.
 */
public final class ConfigLoader {

    private static final ObjectMapper YAML = configure(new ObjectMapper(
            new YAMLFactory().disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)));
    private static final ObjectMapper TREE = configure(JsonMapper.builder().build());

    private ConfigLoader() {
    }

    private static ObjectMapper configure(ObjectMapper m) {
        SimpleModule durations = new SimpleModule("durations");
        durations.addDeserializer(Duration.class, new JsonDeserializer<>() {
            @Override
            public Duration deserialize(JsonParser p, DeserializationContext ctx) throws IOException {
                if (!p.currentToken().isScalarValue()) {
                    throw JsonMappingException.from(p, "expected a duration such as 2s or 24h");
                }
                try {
                    return Durations.parse(p.getValueAsString());
                } catch (RuntimeException e) {
                    throw JsonMappingException.from(p, e.getMessage());
                }
            }
        });
        durations.addSerializer(Duration.class, new JsonSerializer<>() {
            @Override
            public void serialize(Duration d, JsonGenerator g, SerializerProvider p) throws IOException {
                g.writeString(Durations.format(d));
            }
        });
        m.registerModule(durations);
        m.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        m.enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
        m.enable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS);
        m.disable(MapperFeature.ALLOW_COERCION_OF_SCALARS);
        m.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT); // port: 9000.9 is a mistake, not 9000
        // a section or key written twice: the second would silently replace the first (a data
        // directory, fsync), so it is refused
        m.enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
        m.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        return m;
    }

    /**
     * @param file      YAML file, or null for defaults only
     * @param overrides dotted keys ({@code server.port}) to string values, applied last
     */
    public static ServerConfig load(Path file, Map<String, String> overrides) {
        ObjectNode tree = TREE.valueToTree(ServerConfig.defaults());
        if (file != null) {
            merge(tree, readFile(file), "");
        }
        for (Map.Entry<String, String> o : overrides.entrySet()) {
            apply(tree, o.getKey(), o.getValue());
        }
        return bind(tree);
    }

    /** The file's sections; an empty file is an empty mapping. */
    private static ObjectNode readFile(Path file) {
        JsonNode fromFile;
        try {
            fromFile = YAML.readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            String where = "";
            if (e instanceof JsonProcessingException j && j.getLocation() != null && j.getLocation().getLineNr() > 0) {
                where = " (line " + j.getLocation().getLineNr() + ", column " + j.getLocation().getColumnNr() + ")";
            }
            throw new ConfigException("config file " + file + ": " + firstLine(e.getMessage()) + where);
        }
        if (fromFile == null || fromFile.isMissingNode() || fromFile.isNull()) {
            return TREE.createObjectNode();
        }
        if (!fromFile.isObject()) {
            throw new ConfigException("config file " + file + ": expected a mapping of sections");
        }
        return (ObjectNode) fromFile;
    }

    /** The records' compact constructors validate; Jackson's own errors are cut to the key and one line. */
    private static ServerConfig bind(ObjectNode tree) {
        try {
            return TREE.treeToValue(tree, ServerConfig.class);
        } catch (UnrecognizedPropertyException e) {
            throw new ConfigException(path(e) + ": unknown key (expected one of: "
                    + e.getKnownPropertyIds().stream().map(String::valueOf).sorted().collect(Collectors.joining(", "))
                    + ")");
        } catch (JsonMappingException e) {
            if (e.getCause() instanceof ConfigException ce) {
                throw ce;
            }
            throw new ConfigException(path(e) + ": " + firstLine(e.getOriginalMessage()));
        } catch (IOException e) {
            throw new ConfigException(firstLine(e.getMessage()));
        } catch (ConfigException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new ConfigException(firstLine(String.valueOf(e.getMessage())));
        }
    }

    /** The top-level keys of the configuration (server, store, limits, ...). */
    private static final Set<String> SECTIONS = Arrays.stream(ServerConfig.class.getRecordComponents())
            .map(RecordComponent::getName).collect(Collectors.toUnmodifiableSet());

    /**
     * {@code PUSH_PORT=9000} → {@code server.port}; {@code PUSH_STORE_DATA_DIR} → {@code store.dataDir}.
     * Variables whose second word is not a section ({@code PUSH_LOG_LEVEL}) are left alone.
     */
    public static Map<String, String> fromEnvironment(Map<String, String> env) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : env.entrySet()) {
            String k = e.getKey();
            // the short aliases give way to the full name whatever the environment's order
            if (k.equals("PUSH_PORT")) {
                out.putIfAbsent("server.port", e.getValue());
            } else if (k.equals("PUSH_HOST")) {
                out.putIfAbsent("server.host", e.getValue());
            } else if (k.equals("PUSH_DATA_DIR")) {
                out.putIfAbsent("store.dataDir", e.getValue());
            } else if (k.startsWith("PUSH_") && k.indexOf('_', 5) > 0 && !k.equals("PUSH_CONFIG")) {
                String rest = k.substring(5).toLowerCase(Locale.ROOT);
                int us = rest.indexOf('_');
                String section = rest.substring(0, us);
                // Only the configuration's sections: other PUSH_* variables (PUSH_LOG_LEVEL for
                // logback.xml, a CI switch, ...) are not ours to refuse.
                if (SECTIONS.contains(section)) {
                    out.put(section + "." + subKey(section, rest.substring(us + 1)), e.getValue());
                }
            }
        }
        return out;
    }

    /** Sub-sections of each section ({@code auth.jwt}): {@code PUSH_AUTH_JWT_JWKS_FILE} → {@code auth.jwt.jwksFile}. */
    private static String subKey(String section, String snake) {
        JsonNode sec = TREE.valueToTree(ServerConfig.defaults()).get(section);
        int us = snake.indexOf('_');
        if (us > 0 && sec != null && sec.path(snake.substring(0, us)).isObject()) {
            return snake.substring(0, us) + "." + camel(snake.substring(us + 1));
        }
        return camel(snake);
    }

    /** The effective configuration as YAML, for {@code --print-config} and the start-up log. */
    public static String toYaml(ServerConfig config) {
        try {
            return YAML.writeValueAsString(config);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String camel(String snake) {
        StringBuilder sb = new StringBuilder();
        boolean up = false;
        for (char c : snake.toCharArray()) {
            if (c == '_') {
                up = true;
            } else {
                sb.append(up ? Character.toUpperCase(c) : c);
                up = false;
            }
        }
        return sb.toString();
    }

    private static void merge(ObjectNode base, ObjectNode over, String prefix) {
        Iterator<Map.Entry<String, JsonNode>> it = over.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            String key = prefix + e.getKey();
            JsonNode existing = base.get(e.getKey());
            if (existing == null) {
                throw new ConfigException(key + ": unknown key");
            }
            if (existing.isObject()) {
                if (!e.getValue().isObject()) {
                    throw new ConfigException(key + ": " + e.getValue() + " (expected: a mapping)");
                }
                merge((ObjectNode) existing, (ObjectNode) e.getValue(), key + ".");
            } else {
                // null only for a key that is unset by default (auth.jwt.issuer): --print-config writes those
                if (e.getValue().isNull() && !existing.isNull()) {
                    throw new ConfigException(key + ": null (expected: a value)");
                }
                base.set(e.getKey(), e.getValue());
            }
        }
    }

    /**
     * Replaces one leaf of {@code tree}, parsing {@code value} as the type the leaf already has: an
     * override names a key that exists (in the defaults), never a new one.
     */
    private static void apply(ObjectNode tree, String dotted, String value) {
        JsonPointer at = JsonPointer.empty();
        for (String part : dotted.split("\\.")) {
            at = at.appendProperty(part); // escapes '/' and '~' in the part, unlike compile()
        }
        JsonNode existing = tree.at(at);
        JsonNode parent = at.matches() ? null : tree.at(at.head());
        if (parent == null || !parent.isObject() || existing.isMissingNode() || existing.isObject()) {
            throw new ConfigException(dotted + ": unknown key");
        }
        ((ObjectNode) parent).set(at.last().getMatchingProperty(), parse(dotted, existing, value));
    }

    /** Keys that are numbers but unset by default: their null leaf says nothing of the type. */
    private static final Set<String> OPTIONAL_NUMBERS = Set.of("server.adminPort");

    private static JsonNode parse(String key, JsonNode like, String value) {
        if (like.isNumber() || like.isNull() && OPTIONAL_NUMBERS.contains(key)) {
            try {
                return LongNode.valueOf(Long.parseLong(value.trim()));
            } catch (NumberFormatException e) {
                throw new ConfigException(key + ": " + value + " (expected: a whole number)");
            }
        }
        if (like.isBoolean()) {
            if (!value.equals("true") && !value.equals("false")) {
                throw new ConfigException(key + ": " + value + " (expected: true or false)");
            }
            return BooleanNode.valueOf(Boolean.parseBoolean(value));
        }
        return like.isArray() ? list(key, value) : TextNode.valueOf(value);
    }

    /**
     * One syntax for every list key in {@code --set} and {@code PUSH_*}: comma-separated
     * ({@code a,b}) or a YAML flow list ({@code [a, b]}); {@code ""} and {@code []} are empty.
     * Anything else (an unclosed bracket, a nested list or mapping) is refused, not kept as text.
     */
    private static ArrayNode list(String key, String value) {
        String v = value.trim();
        ArrayNode out = TREE.createArrayNode();
        if (v.startsWith("[") || v.endsWith("]")) {
            JsonNode parsed;
            try {
                parsed = YAML.readTree(v);
            } catch (IOException e) {
                parsed = null;
            }
            if (parsed == null || !parsed.isArray()) {
                throw new ConfigException(key + ": " + value + " (expected: a list such as a,b or [a, b])");
            }
            for (JsonNode item : parsed) {
                if (!item.isValueNode() || item.isNull()) {
                    throw new ConfigException(key + ": " + value + " (expected: a list of plain values such as "
                            + "a,b or [a, b])");
                }
                out.add(item.asText());
            }
            return out;
        }
        for (String item : v.split(",")) {
            if (!item.isBlank()) {
                out.add(item.trim());
            }
        }
        return out;
    }

    private static String path(JsonMappingException e) {
        return e.getPath().stream()
                .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
                .collect(Collectors.joining("."));
    }

    private static String firstLine(String m) {
        if (m == null) {
            return "invalid";
        }
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
