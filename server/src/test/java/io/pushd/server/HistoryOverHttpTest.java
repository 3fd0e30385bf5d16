package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code GET /v1/topics/{topic}/events}: pages of kept events, and the subscription's reset rule. */
class HistoryOverHttpTest {

    private static final int KEPT = 50;

    @TempDir
    Path dataDir;
    PushServer server;
    String e;

    @BeforeEach
    void start() throws Exception {
        ServerConfig base = TestServers.config(dataDir);
        server = TestServers.start(base.withStore(base.store().withRetention(Duration.ofHours(24), KEPT)));
        e = server.epoch();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private void publish(String topic, int from, int to) {
        for (int i = from; i <= to; i++) {
            assertThat(Http.publish(server.port(), topic, "{\"n\":" + i + "}").status()).isEqualTo(201);
        }
    }

    private Http.Response events(String topic, String query) {
        return Http.get(server.port(), "/v1/topics/" + topic + "/events" + query);
    }

    private static List<Integer> numbers(JsonNode page) {
        List<Integer> out = new ArrayList<>();
        page.path("events").forEach(ev -> out.add(ev.path("data").path("n").asInt()));
        return out;
    }

    @Test
    void withoutAfterThePageStartsAtTheOldestKeptEventAndSaysWhereTheNextStarts() {
        publish("t", 1, 10);

        Http.Response r = events("t", "?limit=4");

        assertThat(r.status()).isEqualTo(200);
        assertThat(r.header("content-type")).isEqualTo("application/json");
        JsonNode page = r.json();
        assertThat(page.path("topic").asText()).isEqualTo("t");
        assertThat(page.path("epoch").asText()).isEqualTo(e);
        assertThat(numbers(page)).containsExactly(1, 2, 3, 4);
        JsonNode first = page.path("events").get(0);
        assertThat(first.path("id").asText()).isEqualTo(e + "-1");
        assertThat(first.path("ts").asLong()).isPositive();
        assertThat(page.path("next").asText()).isEqualTo(e + "-4");
        assertThat(page.path("head").asText()).isEqualTo(e + "-10");
    }

    @Test
    void followingNextReadsEveryEventOnceAndTheLastPageHasNoNext() {
        publish("t", 1, 25);
        List<Integer> seen = new ArrayList<>();
        String after = "";
        int pages = 0;
        while (after != null) {
            JsonNode page = events("t", "?limit=10&after=" + after).json();
            seen.addAll(numbers(page));
            after = page.path("next").isNull() ? null : page.path("next").asText();
            pages++;
        }

        assertThat(pages).isEqualTo(3);
        assertThat(seen).hasSize(25).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void aPageAfterTheHeadIsEmptyWithTheHeadToPollFrom() {
        publish("t", 1, 3);

        JsonNode page = events("t", "?after=" + e + "-3").json();

        assertThat(numbers(page)).isEmpty();
        assertThat(page.path("next").isNull()).isTrue();
        assertThat(page.path("head").asText()).isEqualTo(e + "-3");
    }

    @Test
    void aTopicNeverWrittenIsAnEmptyPageWhoseHeadIsEpochZero() {
        JsonNode page = events("nothing.yet", "").json();

        assertThat(numbers(page)).isEmpty();
        assertThat(page.path("head").asText()).isEqualTo(e + "-0");
        assertThat(events("nothing.yet", "?after=" + e + "-0").status()).isEqualTo(200);
    }

    @Test
    void theLimitDefaultsTo100AndIsAtMost1000() {
        publish("many", 1, KEPT);

        assertThat(numbers(events("many", "").json())).hasSize(KEPT);
        for (String bad : List.of("0", "1001", "-1", "ten", "1e3", "99999999999")) {
            Http.Response r = events("many", "?limit=" + bad);
            assertThat(r.status()).as(bad).isEqualTo(400);
            assertThat(r.json().path("error").asText()).isEqualTo("invalid_query");
            assertThat(r.json().path("message").asText()).contains("limit", "1-1000");
        }
        assertThat(events("many", "?limit=1000").status()).isEqualTo(200);
    }

    @Test
    void aTokenPutWhereAnotherParameterGoesIsNotQuotedBackInTheError() {
        String token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJlc2lnbmF0dXJl";
        for (String query : List.of("?limit=" + token, "?after=" + token, "?" + token)) {
            Http.Response r = events("t", query);
            assertThat(r.status()).as(query).isEqualTo(400);
            assertThat(r.body()).as(query).doesNotContain("eyJzdWIi").doesNotContain("c2lnbmF0dXJl");
        }
    }

    @Test
    void aMalformedIdOrAnUnknownParameterIs400() {
        Http.Response badId = events("t", "?after=nope");
        Http.Response unknown = events("t", "?from=1");
        Http.Response twice = events("t", "?limit=1&limit=2");
        Http.Response badTopic = events("bad!topic", "");

        assertThat(badId.status()).isEqualTo(400);
        assertThat(badId.json().path("error").asText()).isEqualTo("invalid_id");
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.json().path("error").asText()).isEqualTo("invalid_query");
        assertThat(twice.status()).isEqualTo(400);
        assertThat(badTopic.json().path("error").asText()).isEqualTo("invalid_topic");
    }

    @Test
    void anIdOlderThanTheKeptEventsIs409ExpiredNamingTheHead() {
        publish("t", 1, KEPT + 10); // the first 10 are dropped by count

        Http.Response r = events("t", "?after=" + e + "-3");

        assertThat(r.status()).isEqualTo(409);
        assertThat(r.json().path("error").asText()).isEqualTo("reset");
        assertThat(r.json().path("reason").asText()).isEqualTo("expired");
        assertThat(r.json().path("head").asText()).isEqualTo(e + "-" + (KEPT + 10));
        assertThat(r.json().path("oldest").asText()).isEqualTo(e + "-11");
        assertThat(r.json().path("message").asText()).isNotBlank();
        // just before the oldest kept is still complete
        assertThat(numbers(events("t", "?limit=2&after=" + e + "-10").json())).containsExactly(11, 12);
    }

    @Test
    void anIdFromAnotherHistoryOrBeyondTheHeadIs409WithItsReason() {
        publish("t", 1, 3);

        Http.Response other = events("t", "?after=zz0other-2");
        Http.Response future = events("t", "?after=" + e + "-99");

        assertThat(other.status()).isEqualTo(409);
        assertThat(other.json().path("reason").asText()).isEqualTo("unknown_epoch");
        assertThat(other.json().path("head").asText()).isEqualTo(e + "-3");
        assertThat(future.status()).isEqualTo(409);
        assertThat(future.json().path("reason").asText()).isEqualTo("future");
    }

    @Test
    void aPageStopsAtAboutOneMebibyteOfEventsAndNextContinuesIt() {
        String big = "\"" + "x".repeat(60_000) + "\"";
        for (int i = 0; i < 30; i++) { // 1.8 MB in all
            assertThat(Http.publish(server.port(), "big", big).status()).isEqualTo(201);
        }

        JsonNode first = events("big", "?limit=1000").json();
        int n = first.path("events").size();
        JsonNode second = events("big", "?limit=1000&after=" + first.path("next").asText()).json();

        assertThat(n).isBetween(17, 18); // stops after the event that crosses 1 MiB
        assertThat(second.path("events").size()).isEqualTo(30 - n);
        assertThat(second.path("next").isNull()).isTrue();
    }

    @Test
    void headAnswersWithoutABodyAndPostStillPublishes() {
        publish("t", 1, 2);

        Http.Response head = Http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.port() + "/v1/topics/t/events"))
                .method("HEAD", HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build());

        assertThat(head.status()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
        assertThat(Http.publish(server.port(), "t", "{\"n\":3}").status()).isEqualTo(201);
        assertThat(numbers(events("t", "").json())).containsExactly(1, 2, 3);
    }
}
