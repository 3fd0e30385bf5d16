package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.config.ServerConfig;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.openhft.chronicle.core.time.SetTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Anyone may publish to a new topic, and every topic's head is kept for the whole epoch: the
 * number of topics is capped, and a topic whose events are all gone keeps only its head.
 */
class TopicLimitTest {

    /** 2027-01-15T08:00:00Z, the start of an hourly log cycle. */
    static final long T0 = 1_800_000_000_000L;
    static final long HOUR = 3_600_000L;

    @TempDir
    Path dataDir;
    final SetTimeProvider clock = new SetTimeProvider(Instant.ofEpochMilli(T0 + 10 * 60_000));
    PushServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private ServerConfig config(int maxTopics, Duration retentionAge) {
        ServerConfig c = TestServers.config(dataDir);
        return c.withLimits(c.limits().withMaxTopics(maxTopics))
                .withStore(c.store().withRetention(retentionAge, c.store().retentionCount()));
    }

    private void start(int maxTopics, Duration retentionAge) throws Exception {
        server = PushServer.start(config(maxTopics, retentionAge), clock);
    }

    private void restart(int maxTopics, Duration retentionAge) throws Exception {
        server.close();
        start(maxTopics, retentionAge);
    }

    private String id(long seq) {
        return server.epoch() + "-" + seq;
    }

    private void assertPublished(String topic, int status, long seq) {
        Http.Response r = Http.publish(server.port(), topic, "{}");
        assertThat(r.status()).as(r.body()).isEqualTo(status);
        assertThat(r.json().path("id").asText()).isEqualTo(id(seq));
    }

    private static double gauge(String scrape, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + " (\\S+)$").matcher(scrape);
        assertThat(m.find()).as(name).isTrue();
        return Double.parseDouble(m.group(1));
    }

    @Test
    void aPublishToANewTopicBeyondTheLimitIs507WhileExistingTopicsKeepPublishing() throws Exception {
        start(3, Duration.ofHours(24));
        for (String t : new String[] {"a", "b", "c"}) {
            assertPublished(t, 201, 1);
        }

        Http.Response refused = Http.publish(server.port(), "d", "{}");

        assertThat(refused.status()).isEqualTo(507);
        assertThat(refused.header("content-type")).isEqualTo("application/json");
        assertThat(refused.json().path("error").asText()).isEqualTo("too_many_topics");
        assertThat(refused.json().path("message").asText())
                .isEqualTo("this server holds its limit of 3 topics; publish to an existing topic");
        assertPublished("a", 201, 2);
        assertThat(Http.get(server.port(), "/v1/topics/d").json().path("head").isNull()).isTrue();
        assertThat(gauge(Http.get(server.port(), "/metrics").body(), "push_topics")).isEqualTo(3);
        try (WsClient c = WsClient.connect(server.port(), "topic=d")) { // following creates nothing
            assertThat(c.next().path("type").asText()).isEqualTo("subscribed");
        }
        assertThat(server.store().topicCount()).isEqualTo(3);
    }

    @Test
    void theLimitCountsTheTopicsOfTheEpochAcrossARestart() throws Exception {
        start(2, Duration.ofHours(24));
        assertPublished("a", 201, 1);
        assertPublished("b", 201, 1);

        restart(2, Duration.ofHours(24));

        assertThat(Http.publish(server.port(), "c", "{}").status()).isEqualTo(507);
        assertPublished("b", 201, 2);
        restart(3, Duration.ofHours(24)); // raising the limit admits new topics again
        assertPublished("c", 201, 1);
    }

    @Test
    void aTopicWhoseEventsAllExpiredContinuesItsSequenceAlsoAcrossARestart() throws Exception {
        start(2, Duration.ofHours(1));
        for (long s = 1; s <= 3; s++) {
            assertPublished("gone", 201, s);
        }
        clock.advanceMillis(3 * HOUR);
        assertPublished("other", 201, 1); // rolls the log to a new hourly file
        server.enforceRetention();
        var info = Http.get(server.port(), "/v1/topics/gone").json();
        assertThat(info.path("head").asText()).isEqualTo(id(3));
        assertThat(info.path("oldest").isNull()).as("nothing of 'gone' is kept").isTrue();

        assertPublished("gone", 201, 4);
        clock.advanceMillis(3 * HOUR);
        assertPublished("other", 201, 2);
        server.enforceRetention();
        restart(2, Duration.ofHours(1));

        assertThat(Http.get(server.port(), "/v1/topics/gone").json().path("oldest").isNull()).isTrue();
        assertPublished("gone", 201, 5);
        assertThat(Http.publish(server.port(), "third", "{}").status())
                .as("a forgotten topic still counts: its head is kept").isEqualTo(507);
        assertThat(gauge(Http.get(server.port(), "/metrics").body(), "push_topics")).isEqualTo(2);
    }
}
