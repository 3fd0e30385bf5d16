package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Error bodies and error frames say what is wrong in our words and never name the JSON library. */
class PlainErrorMessagesTest {

    /** Bodies (and client messages) that used to get Jackson's own text back, and what they get now (a regex). */
    static final String[][] CASES = {
        {"[".repeat(201) + "]".repeat(201), "is JSON nested deeper than 200 levels"},
        {"{\"a\":1} {\"b\":2}", "is not a single JSON value \\(more follows at line 1, column 9\\)"},
        {"{\"x\":NaN}", "is not valid JSON at line 1, column \\d+"},
        {"{\"x\":012}", "is not valid JSON at line 1, column \\d+"},
        {"{'x':1}", "is not valid JSON at line 1, column \\d+"},
        {"{\"x\":\"a\u0001b\"}", "is not valid JSON at line 1, column \\d+"},
        {"{\"x\":[1,2", "is not valid JSON: it ends in the middle of a value"},
        {"[" + "9".repeat(1001) + "]", "has a JSON number longer than 1000 characters"},
    };

    @TempDir
    static Path dataDir;
    static PushServer server;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start(dataDir);
    }

    @AfterAll
    static void stop() {
        assertThat(server.store().topicCount()).isZero();
        server.close();
    }

    private static void assertPlainWords(String message) {
        assertThat(message).doesNotContain("com.fasterxml", "Jackson", "jackson", "JsonReadFeature",
                "StreamReadConstraints", "JsonNode", "Feature", "()", "`");
    }

    @Test
    void publishErrorsNameTheProblemAndItsPlaceButNoInternals() {
        for (String[] c : CASES) {
            Http.Response r = Http.publish(server.port(), "t", c[0]);

            assertThat(r.status()).as(c[1]).isEqualTo(400);
            assertThat(r.json().path("error").asText()).isEqualTo("bad_json");
            String message = r.json().path("message").asText();
            assertThat(message).matches("body " + c[1]);
            assertPlainWords(message);
        }
    }

    @Test
    void errorFramesForUnreadableClientMessagesNameNoInternals() throws Exception {
        try (WsClient c = WsClient.connect(server.port(), "topic=t")) {
            assertThat(c.next().path("type").asText()).isEqualTo("subscribed");
            for (String[] cse : CASES) {
                c.send(cse[0]);
                JsonNode err = c.next();

                assertThat(err.path("type").asText()).as(cse[1]).isEqualTo("error");
                assertThat(err.path("code").asText()).as(cse[1]).isEqualTo("bad_json");
                assertThat(err.path("message").asText()).matches("message " + cse[1]);
                assertPlainWords(err.path("message").asText());
            }
        }
    }
}
