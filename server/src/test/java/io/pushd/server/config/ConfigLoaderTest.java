package io.pushd.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {

    /** The file shipped in the repository root, seen from the server module's working directory. */
    static final Path SHIPPED = Path.of("..", "config", "server.yaml");

    @TempDir
    Path dir;

    private Path yaml(String content) throws IOException {
        Path f = dir.resolve("server.yaml");
        Files.writeString(f, content);
        return f;
    }

    private ConfigException loadFailure(String content) throws IOException {
        Path f = yaml(content);
        return catchThrowableOfType(ConfigException.class, () -> ConfigLoader.load(f, Map.of()));
    }

    @Test
    void shippedConfigFileEqualsTheBuiltInDefaults() {
        assertThat(SHIPPED).isRegularFile();

        assertThat(ConfigLoader.load(SHIPPED, Map.of())).isEqualTo(ServerConfig.defaults());
    }

    @Test
    void aSingleNodesDrainExpectsARestartUnlessTurnedOff() {
        assertThat(ServerConfig.defaults().drain().expectRestart()).isTrue();

        assertThat(ConfigLoader.load(null, Map.of("drain.expectRestart", "false")).drain().expectRestart()).isFalse();
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("drain.expectRestart", "sometimes")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("drain.expectRestart");
    }

    @Test
    void noFileAndNoOverridesGivesTheDefaults() {
        assertThat(ConfigLoader.load(null, Map.of())).isEqualTo(ServerConfig.defaults());
    }

    @Test
    void emptyFileGivesTheDefaults() throws IOException {
        assertThat(ConfigLoader.load(yaml(""), Map.of())).isEqualTo(ServerConfig.defaults());
    }

    @Test
    void fileReplacesOnlyTheKeysItNames() throws IOException {
        ServerConfig c = ConfigLoader.load(yaml("server:\n  port: 9090\nstore:\n  retentionAge: 2h\n"), Map.of());

        assertThat(c.server().port()).isEqualTo(9090);
        assertThat(c.server().host()).isEqualTo(ServerConfig.Server.DEFAULT_HOST);
        assertThat(c.store().retentionAge()).isEqualTo(Duration.ofHours(2));
        assertThat(c.store().retentionCount()).isEqualTo(ServerConfig.Store.DEFAULT_RETENTION_COUNT);
        assertThat(c.limits()).isEqualTo(Limits.defaults());
    }

    @Test
    void unknownTopLevelKeyIsRejectedByName() throws IOException {
        ConfigException e = loadFailure("servre:\n  port: 9090\n");

        assertThat(e).hasMessageContaining("servre").hasMessageContaining("unknown key");
    }

    @Test
    void unknownNestedKeyIsRejectedWithItsDottedName() throws IOException {
        ConfigException e = loadFailure("store:\n  retentionDays: 3\n");

        assertThat(e).hasMessageContaining("store.retentionDays").hasMessageContaining("unknown key");
    }

    @Test
    void sectionGivenAsAScalarIsRejected() throws IOException {
        assertThat(loadFailure("server: 8080\n")).hasMessageContaining("server").hasMessageContaining("mapping");
    }

    @Test
    void fileThatIsNotAMappingIsRejected() throws IOException {
        assertThat(loadFailure("- a\n- b\n")).hasMessageContaining("expected a mapping");
    }

    @Test
    void nullValueIsRejectedByName() throws IOException {
        assertThat(loadFailure("server:\n  port:\n")).hasMessageContaining("server.port");
    }

    @Test
    void textForANumberIsRejectedByName() throws IOException {
        assertThat(loadFailure("server:\n  port: abc\n")).hasMessageContaining("server.port");
    }

    @Test
    void quotedNumberIsNotCoerced() throws IOException {
        assertThat(loadFailure("server:\n  port: \"8081\"\n")).hasMessageContaining("server.port");
    }

    @Test
    void wordThatIsNotABooleanIsRejectedByName() throws IOException {
        assertThat(loadFailure("store:\n  fsync: maybe\n")).hasMessageContaining("store.fsync");
    }

    @Test
    void durationWithoutAUnitIsRejectedByName() throws IOException {
        ConfigException e = loadFailure("store:\n  retentionAge: 12\n");

        assertThat(e).hasMessageContaining("store.retentionAge").hasMessageContaining("12");
    }

    @Test
    void malformedDurationIsRejectedByName() throws IOException {
        assertThat(loadFailure("heartbeat:\n  interval: soon\n"))
                .hasMessageContaining("heartbeat.interval").hasMessageContaining("soon");
    }

    @Test
    void durationsAcceptEveryUnitAndIsoForm() throws IOException {
        ServerConfig c = ConfigLoader.load(yaml("heartbeat:\n  interval: 250ms\n  timeout: PT2S\n"
                + "store:\n  retentionAge: 7d\n  dedupeWindow: 5m\n  retentionCheckInterval: 30s\n"), Map.of());

        assertThat(c.heartbeat().interval()).isEqualTo(Duration.ofMillis(250));
        assertThat(c.heartbeat().timeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.store().retentionAge()).isEqualTo(Duration.ofDays(7));
        assertThat(c.store().dedupeWindow()).isEqualTo(Duration.ofMinutes(5));
        assertThat(c.store().retentionCheckInterval()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void portOutOfRangeNamesKeyValueAndExpectation() throws IOException {
        ConfigException e = loadFailure("server:\n  port: 70000\n");

        assertThat(e).hasMessageContaining("server.port").hasMessageContaining("70000")
                .hasMessageContaining("expected");
    }

    @Test
    void compilerThreadsAreAtNice19UnlessSetAndANiceAbove19IsRefusedByName() throws IOException {
        assertThat(ConfigLoader.load(null, Map.of()).server().compilerThreadNice()).isEqualTo(19);
        assertThat(ConfigLoader.load(null, Map.of("server.compilerThreadNice", "0")).server().compilerThreadNice())
                .as("0: left alone").isZero();

        assertThat(loadFailure("server:\n  compilerThreadNice: 20\n"))
                .hasMessage("server.compilerThreadNice: 20 (expected: 0-19 (0 = left alone))");
        assertThat(loadFailure("server:\n  compilerThreadNice: -5\n")).hasMessageContaining("server.compilerThreadNice");
    }

    @Test
    void zeroRetentionCountNamesKeyValueAndExpectation() throws IOException {
        ConfigException e = loadFailure("store:\n  retentionCount: 0\n");

        assertThat(e).hasMessage("store.retentionCount: 0 (expected: >= 1)");
    }

    @Test
    void crossFieldRuleIsChecked() throws IOException {
        ConfigException e = loadFailure("drain:\n  lbGrace: 10s\n  deadline: 5s\n");

        assertThat(e).hasMessageContaining("drain.deadline").hasMessageContaining("5s").hasMessageContaining("expected");
    }

    @Test
    void missingFileIsAConfigError() {
        Path missing = dir.resolve("nope.yaml");

        assertThatThrownBy(() -> ConfigLoader.load(missing, Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("nope.yaml");
    }

    @Test
    void brokenYamlIsAConfigError() throws IOException {
        assertThat(loadFailure("server:\n  port: [1,\n")).hasMessageContaining("config file");
    }

    @Test
    void brokenYamlNamesTheLineAndColumn() throws IOException {
        assertThat(loadFailure("server:\n  port: 8080\n   host: x\n")).hasMessageContaining("config file")
                .hasMessageContaining("(line 3, column");
    }

    @Test
    void aSectionOrKeyWrittenTwiceIsRejectedRatherThanTheFirstSilentlyReplaced() throws IOException {
        assertThat(loadFailure("store:\n  dataDir: /var/lib/push\n  fsync: true\nserver:\n  port: 9000\n"
                + "store:\n  retentionCount: 500\n")).hasMessageContaining("config file").hasMessageContaining("store");
        assertThat(loadFailure("server:\n  port: 9000\n  port: 9001\n")).hasMessageContaining("port");
    }

    @Test
    void aFractionForAWholeNumberIsRejectedByName() throws IOException {
        assertThat(loadFailure("server:\n  port: 9000.9\n")).hasMessageContaining("server.port");
        assertThat(loadFailure("store:\n  retentionCount: 1.5\n")).hasMessageContaining("store.retentionCount");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("server.port", "9000.9")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("server.port");
    }

    @Test
    void aDurationLongerThan36500DaysIsRejectedByName() throws IOException {
        // 99999999999d would overflow the nanoseconds of a timer: every connection failed at run time
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("limits.handshakeTimeout", "99999999999d")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("limits.handshakeTimeout")
                .hasMessageContaining("36500d");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("store.retentionAge", "999999999999d")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("store.retentionAge");
        assertThat(loadFailure("store:\n  retentionAge: PT99999999999999H\n")).hasMessageContaining("store.retentionAge");
        assertThat(ConfigLoader.load(null, Map.of("store.retentionAge", "36500d")).store().retentionAge())
                .isEqualTo(Duration.ofDays(36_500));
    }

    @Test
    void theFullVariableNameWinsOverItsShortAliasWhateverTheOrder() {
        for (boolean aliasFirst : new boolean[] {true, false}) {
            Map<String, String> env = new java.util.LinkedHashMap<>();
            if (aliasFirst) {
                env.put("PUSH_DATA_DIR", "/short");
                env.put("PUSH_STORE_DATA_DIR", "/full");
                env.put("PUSH_PORT", "1");
                env.put("PUSH_SERVER_PORT", "2");
            } else {
                env.put("PUSH_STORE_DATA_DIR", "/full");
                env.put("PUSH_DATA_DIR", "/short");
                env.put("PUSH_SERVER_PORT", "2");
                env.put("PUSH_PORT", "1");
            }
            assertThat(ConfigLoader.fromEnvironment(env)).containsEntry("store.dataDir", "/full")
                    .containsEntry("server.port", "2");
        }
    }

    @Test
    void overridesBeatTheFile() throws IOException {
        Path f = yaml("server:\n  port: 9090\n  host: 127.0.0.1\nstore:\n  fsync: false\n");

        ServerConfig c = ConfigLoader.load(f, Map.of("server.port", "9191", "store.fsync", "true",
                "store.retentionAge", "3h", "security.allowedOrigins", "https://a.example, https://b.example"));

        assertThat(c.server().port()).isEqualTo(9191);
        assertThat(c.server().host()).isEqualTo("127.0.0.1");
        assertThat(c.store().fsync()).isTrue();
        assertThat(c.store().retentionAge()).isEqualTo(Duration.ofHours(3));
        assertThat(c.security().allowedOrigins()).containsExactly("https://a.example", "https://b.example");
    }

    @Test
    void overrideOfAnUnknownKeyIsRejectedByName() {
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("server.prot", "1")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("server.prot");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("nosuch.key", "1")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("nosuch.key");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("server", "1")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("server");
    }

    @Test
    void overrideWithTheWrongTypeNamesKeyAndValue() {
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("server.port", "abc")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("server.port: abc (expected: a whole number)");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("store.fsync", "yes")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("store.fsync: yes (expected: true or false)");
    }

    @Test
    void overrideOutOfRangeIsValidatedLikeTheFile() {
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("server.port", "70000")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("server.port").hasMessageContaining("70000").hasMessageContaining("expected");
    }

    @Test
    void everyListKeyTakesCommaSeparatedValuesOrAFlowList() {
        for (String origins : new String[] {"https://a.example,http://b.example:8080",
            " https://a.example , http://b.example:8080 ", "[https://a.example, http://b.example:8080]",
            "[\"https://a.example\", 'http://b.example:8080']"}) {
            ServerConfig c = ConfigLoader.load(null, Map.of("security.allowedOrigins", origins,
                    "security.trustedProxies", origins.startsWith("[") ? "[10.0.0.0/8, 192.168.1.2]" : "10.0.0.0/8,192.168.1.2"));

            assertThat(c.security().allowedOrigins()).as(origins)
                    .containsExactly("https://a.example", "http://b.example:8080");
            assertThat(c.security().trustedProxies()).containsExactly("10.0.0.0/8", "192.168.1.2");
        }
    }

    @Test
    void anEmptyListOverrideClearsTheList() {
        assertThat(ConfigLoader.load(null, Map.of("security.allowedOrigins", "[]")).security().allowedOrigins())
                .isEmpty();
        assertThat(ConfigLoader.load(null, Map.of("security.allowedOrigins", "")).security().allowedOrigins())
                .isEmpty();
    }

    @Test
    void aMalformedListIsRefusedNamingKeyAndValue() {
        for (String bad : new String[] {"[https://a.example", "https://a.example]", "[[https://a.example]]",
            "[{a: 1}]"}) {
            assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("security.allowedOrigins", bad)))
                    .as(bad).isInstanceOf(ConfigException.class)
                    .hasMessageStartingWith("security.allowedOrigins: " + bad + " (expected: ");
        }
    }

    @Test
    void allowedOriginsMustBeOriginsAsBrowsersSendThem() {
        for (String bad : new String[] {"https://a.example/", "https://a.example/app", "a.example", "null",
            "https://A.example", "https://a.example:443x", "*"}) {
            assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("security.allowedOrigins", bad)))
                    .as(bad).isInstanceOf(ConfigException.class)
                    .hasMessage("security.allowedOrigins: " + bad + " (expected: origins such as https://app.example"
                            + " or http://localhost:8080: scheme://host[:port], lowercase, no path, no trailing slash)");
        }
        assertThat(ConfigLoader.load(null, Map.of("security.allowedOrigins",
                "http://[::1]:8080,https://127.0.0.1,app-x://id.local")).security().allowedOrigins()).hasSize(3);
    }

    @Test
    void allowedOriginsInTheFileAreValidatedToo() throws IOException {
        assertThat(loadFailure("security:\n  allowedOrigins: [\"https://a.example/\"]\n"))
                .hasMessageContaining("security.allowedOrigins: https://a.example/ (expected: origins");
    }

    @Test
    void environmentVariablesMapToDottedKeys() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PUSH_PORT", "9000");
        env.put("PUSH_STORE_DATA_DIR", "/x");
        env.put("PUSH_HOST", "::1");
        env.put("PUSH_LIMITS_MAX_PUBLISH_BYTES", "1024");
        env.put("PUSH_CONFIG", "/etc/push.yaml");
        env.put("PATH", "/usr/bin");
        env.put("PUSHY", "x");

        assertThat(ConfigLoader.fromEnvironment(env)).containsExactlyInAnyOrderEntriesOf(Map.of(
                "server.port", "9000",
                "store.dataDir", "/x",
                "server.host", "::1",
                "limits.maxPublishBytes", "1024"));
    }

    @Test
    void pushVariablesOutsideTheConfigurationSectionsAreIgnored() {
        assertThat(ConfigLoader.fromEnvironment(Map.of("PUSH_LOG_LEVEL", "DEBUG", "PUSH_REQUIRE_NGINX", "true",
                "PUSH_SECURITY_TRUSTED_PROXIES", "10.0.0.1")))
                .containsExactly(Map.entry("security.trustedProxies", "10.0.0.1"));
    }

    @Test
    void shortDataDirVariableIsAnAlias() {
        assertThat(ConfigLoader.fromEnvironment(Map.of("PUSH_DATA_DIR", "/d")))
                .containsExactly(Map.entry("store.dataDir", "/d"));
    }

    @Test
    void environmentMappingDoesNotDependOnTheDefaultLocale() {
        Locale saved = Locale.getDefault();
        try {
            Locale.setDefault(Locale.forLanguageTag("tr-TR")); // 'I'.toLowerCase() is a dotless i there
            assertThat(ConfigLoader.fromEnvironment(Map.of("PUSH_LIMITS_MAX_CONNECTIONS", "5")))
                    .containsExactly(Map.entry("limits.maxConnections", "5"));
        } finally {
            Locale.setDefault(saved);
        }
    }

    @Test
    void environmentOverridesApplyToTheConfiguration() {
        ServerConfig c = ConfigLoader.load(SHIPPED,
                ConfigLoader.fromEnvironment(Map.of("PUSH_PORT", "9000", "PUSH_STORE_DATA_DIR", "/x")));

        assertThat(c).isEqualTo(ServerConfig.defaults()
                .withServer(ServerConfig.Server.defaults().withPort(9000))
                .withStore(ServerConfig.Store.defaults().withDataDir("/x")));
    }

    @Test
    void yamlOfTheDefaultsLoadsBackToTheDefaults() throws IOException {
        String text = ConfigLoader.toYaml(ServerConfig.defaults());

        assertThat(text).contains("port: 8080").contains("retentionAge: \"1d\"").contains("handshakeTimeout: \"10s\"");
        assertThat(ConfigLoader.load(yaml(text), Map.of())).isEqualTo(ServerConfig.defaults());
    }

    @Test
    void theShippedFileListsEveryKeyTheServerPrints() throws IOException {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        Map<String, JsonNode> printed = new LinkedHashMap<>();
        keys(yaml.readTree(ConfigLoader.toYaml(ServerConfig.defaults())), "", printed);
        Map<String, JsonNode> shipped = new LinkedHashMap<>();
        keys(yaml.readTree(SHIPPED.toFile()), "", shipped);
        String text = Files.readString(SHIPPED);
        assertThat(printed).hasSizeGreaterThan(40);
        // README: "config/server.yaml lists every key with its default"; one unset by default is
        // there as a comment ("# adminPort: 9090")
        List<String> missing = printed.entrySet().stream()
                .filter(e -> !shipped.containsKey(e.getKey()))
                .filter(e -> !e.getValue().isNull()
                        || !text.contains("# " + e.getKey().substring(e.getKey().lastIndexOf('.') + 1) + ":"))
                .map(Map.Entry::getKey).toList();
        assertThat(missing).isEmpty();
    }

    private static void keys(JsonNode node, String prefix, Map<String, JsonNode> out) {
        node.fields().forEachRemaining(e -> {
            String key = prefix + e.getKey();
            if (e.getValue().isObject() && !e.getValue().isEmpty()) {
                keys(e.getValue(), key + ".", out);
            } else {
                out.put(key, e.getValue());
            }
        });
    }

    @Test
    void yamlOfACustomConfigLoadsBackToTheSameConfig() throws IOException {
        ServerConfig custom = ServerConfig.defaults()
                .withServer(ServerConfig.Server.defaults().withPort(1234))
                .withStore(ServerConfig.Store.defaults().withRetention(Duration.ofMillis(90_500), 7).withFsync(true))
                .withSecurity(new ServerConfig.Security(List.of("https://a.example"), List.of("10.0.0.1")));

        assertThat(ConfigLoader.load(yaml(ConfigLoader.toYaml(custom)), Map.of())).isEqualTo(custom);
    }

    @Test
    void theDemoIsOnAndNoDefaultTopicIsSetByDefault() {
        ServerConfig.Server s = ServerConfig.defaults().server();

        assertThat(s.demo()).isTrue();
        assertThat(s.defaultTopic()).isEmpty();
        assertThat(s.defaultTopicOrNull()).isNull();
    }

    @Test
    void demoAndDefaultTopicAreSetFromTheFileAndFromOverrides() throws IOException {
        ServerConfig fromFile = ConfigLoader.load(yaml("server:\n  demo: false\n  defaultTopic: feed\n"), Map.of());
        ServerConfig fromFlags = ConfigLoader.load(null, Map.of("server.demo", "false", "server.defaultTopic", "news"));

        assertThat(fromFile.server().demo()).isFalse();
        assertThat(fromFile.server().defaultTopicOrNull()).isEqualTo("feed");
        assertThat(fromFlags.server().demo()).isFalse();
        assertThat(fromFlags.server().defaultTopicOrNull()).isEqualTo("news");
        assertThat(ConfigLoader.fromEnvironment(Map.of("PUSH_SERVER_DEFAULT_TOPIC", "x")))
                .containsEntry("server.defaultTopic", "x");
    }

    @Test
    void aDefaultTopicThatIsNoTopicNameIsRejectedByName() throws IOException {
        assertThat(loadFailure("server:\n  defaultTopic: \"a b\"\n"))
                .hasMessageContaining("server.defaultTopic").hasMessageContaining("[A-Za-z0-9_.:-]");
    }

    @Test
    void theFanoutCoalesceWindowIsSetFromTheFileAndFromTheEnvironment() throws IOException {
        assertThat(ConfigLoader.load(yaml("fanout:\n  coalesceWindow: 2ms\n"), Map.of()).fanout().coalesceWindow())
                .isEqualTo(java.time.Duration.ofMillis(2));
        assertThat(ConfigLoader.load(SHIPPED,
                ConfigLoader.fromEnvironment(Map.of("PUSH_FANOUT_COALESCE_WINDOW", "1ms"))).fanout().coalesceWindow())
                .isEqualTo(java.time.Duration.ofMillis(1));
        assertThat(ConfigLoader.load(SHIPPED, Map.of()).fanout().coalesceMinSubscribers())
                .isEqualTo(ServerConfig.Fanout.DEFAULT_COALESCE_MIN_SUBSCRIBERS);
        assertThat(ConfigLoader.load(yaml("fanout:\n  coalesceMinSubscribers: 100\n"), Map.of())
                .fanout().coalesceMinSubscribers()).isEqualTo(100);
        assertThat(ConfigLoader.load(SHIPPED, ConfigLoader.fromEnvironment(
                Map.of("PUSH_FANOUT_COALESCE_MIN_SUBSCRIBERS", "8"))).fanout().coalesceMinSubscribers()).isEqualTo(8);
    }

    @Test
    void fanoutTcpNoDelayIsOnByDefaultAndTurnedOffFromTheFileOrTheEnvironment() throws IOException {
        assertThat(ConfigLoader.load(SHIPPED, Map.of()).fanout().tcpNoDelay()).isTrue();
        assertThat(ConfigLoader.load(yaml("fanout:\n  tcpNoDelay: false\n"), Map.of()).fanout().tcpNoDelay()).isFalse();
        assertThat(ConfigLoader.load(SHIPPED, ConfigLoader.fromEnvironment(
                Map.of("PUSH_FANOUT_TCP_NO_DELAY", "false"))).fanout().tcpNoDelay()).isFalse();
        assertThat(loadFailure("fanout:\n  tcpNoDelay: sometimes\n")).hasMessageContaining("fanout.tcpNoDelay");
    }

    @Test
    void aFanoutCoalesceMinimumBelowOneIsRejectedByName() throws IOException {
        assertThat(loadFailure("fanout:\n  coalesceMinSubscribers: 0\n"))
                .hasMessage("fanout.coalesceMinSubscribers: 0 (expected: >= 1)");
    }

    @Test
    void aFanoutCoalesceWindowAbove50msOrNegativeIsRejectedByName() throws IOException {
        assertThat(loadFailure("fanout:\n  coalesceWindow: 51ms\n"))
                .hasMessage("fanout.coalesceWindow: 51ms (expected: 0-50ms (0 = off))");
        assertThat(loadFailure("fanout:\n  coalesceWindow: PT-0.001S\n"))
                .hasMessageContaining("fanout.coalesceWindow").hasMessageContaining("0-50ms");
    }
}
