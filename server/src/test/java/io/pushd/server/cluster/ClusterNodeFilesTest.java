package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.PushServer;
import io.pushd.server.config.Cluster;
import io.pushd.server.testing.Http;
import io.pushd.server.testing.TestServers;
import io.pushd.server.testing.WsClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster node keeps the history in Redis and only its replay cache on disk: it opens no
 * single-node log, and its metrics describe the topics it follows and that cache, not a store it
 * does not use.
 */
class ClusterNodeFilesTest {

    @TempDir
    Path dir;
    RedisProcess redis;
    PushServer node;
    Path data;

    @BeforeEach
    void start() throws Exception {
        redis = RedisProcess.start(dir);
        data = dir.resolve("node"); // not there yet: the node makes it
        node = TestServers.start(TestServers.config(data).withCluster(new Cluster(redis.uri(), Duration.ofSeconds(2))));
    }

    @AfterEach
    void stop() throws Exception {
        node.close();
        redis.close();
    }

    private static double gauge(String scrape, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + " (\\S+)$").matcher(scrape);
        assertThat(m.find()).as(name).isTrue();
        return Double.parseDouble(m.group(1));
    }

    @Test
    void aClusterNodeOpensNoSingleNodeLogAndItsGaugesCountFollowedTopicsAndTheReplayCache() throws Exception {
        try (WsClient follower = WsClient.connect(node.port(), "topic=followed")) {
            assertThat(follower.next().path("type").asText()).isEqualTo("subscribed");
            assertThat(Http.publish(node.port(), "followed", "{\"n\":1}").status()).isEqualTo(201);
            assertThat(Http.publish(node.port(), "only-published", "{\"n\":1}").status()).isEqualTo(201);
            assertThat(follower.awaitEvents(1, Duration.ofSeconds(5))).hasSize(1);

            assertThat(node.store()).isNull();
            assertThat(data.resolve("log")).doesNotExist();
            assertThat(data.resolve("epoch")).as("no single-node epoch either").doesNotExist();
            assertThat(data.resolve("cluster-cache")).isDirectory();

            String scrape = Http.get(node.port(), "/metrics").body();
            assertThat(gauge(scrape, "push_topics")).as("followed here; a topic only published through it is not")
                    .isEqualTo(1);
            assertThat(gauge(scrape, "push_cluster_cache_disk_bytes")).isPositive();
            assertThat(scrape).doesNotContain("push_store_disk_bytes").doesNotContain("push_store_writable")
                    .doesNotContain("push_store_oldest_event_age_seconds");
            Http.Response ready = Http.get(node.port(), "/readyz");
            assertThat(ready.status()).isEqualTo(200);
            assertThat(ready.json().path("store").asText()).isEqualTo("writable");
        }
        assertThat(Files.list(data).map(p -> p.getFileName().toString()))
                .as("the data directory holds the cache and the connection count only").doesNotContain("log", "heads.properties");
    }
}
