package io.pushd.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code cluster.redisUri}: off by default, Lettuce's URI forms, refused early, never printed with its password. */
class ClusterConfigTest {

    @Test
    void clusterModeIsOffByDefault() {
        assertThat(ConfigLoader.load(null, Map.of()).cluster().enabled()).isFalse();
    }

    @Test
    void redisRedissAndSentinelUrisAreAccepted() {
        for (String uri : new String[] {"redis://127.0.0.1:6379", "rediss://user:secret@redis.example:6380/2",
                "redis-sentinel://s1:26379,s2:26379/0#mymaster"}) {
            Cluster c = ConfigLoader.load(null, Map.of("cluster.redisUri", uri)).cluster();
            assertThat(c.enabled()).isTrue();
            assertThat(c.uri()).isNotNull();
        }
    }

    @Test
    void theEnvironmentVariableNamesTheKey() {
        Map<String, String> o = ConfigLoader.fromEnvironment(Map.of("PUSH_CLUSTER_REDIS_URI", "redis://r:6379"));
        assertThat(ConfigLoader.load(null, o).cluster().redisUri()).isEqualTo("redis://r:6379");
    }

    @Test
    void aUriThatIsNotRedisIsRefusedByName() {
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("cluster.redisUri", "http://host:6379")))
                .isInstanceOf(ConfigException.class).hasMessageStartingWith("cluster.redisUri: http://host:6379");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("cluster.redisUri", "redis-sentinel://s1:26379")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("sentinelMasterId");
    }

    @Test
    void aTimeoutOutOfRangeIsRefusedByName() {
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("cluster.redisTimeout", "1ms")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("cluster.redisTimeout");
    }

    @Test
    void thePrintedConfigurationHidesThePassword() {
        ServerConfig c = ConfigLoader.load(null, Map.of("cluster.redisUri", "redis://user:s3cret@host:6379"));
        String yaml = ConfigLoader.toYaml(c);
        assertThat(yaml).contains("redis://***@host:6379").doesNotContain("s3cret");
        assertThat(c.cluster().redisUri()).contains("s3cret"); // the client still gets it
    }

    @Test
    void aMalformedUriIsRefusedWithoutItsPasswordEvenWhenTheParserQuotesIt() {
        // URISyntaxException's message repeats the whole URI, password included
        for (String uri : new String[] {"redis://u:sek%rit@host:6379", "redis://u:sekrit@[::1:40199",
                "rediss://:sek%rit@host:6379"}) {
            assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("cluster.redisUri", uri)))
                    .isInstanceOf(ConfigException.class).hasMessageStartingWith("cluster.redisUri: ")
                    .hasMessageContaining("***@").hasMessageNotContaining("sek");
        }
    }

    @Test
    void aRedisClusterIsNamedByItsSeedsEachWithTheSamePassword() {
        Cluster c = ConfigLoader.load(null, Map.of("cluster.redisUri",
                "redis-cluster://:s3cret@10.0.0.1:7000,10.0.0.2:7001, 10.0.0.3:7002")).cluster();
        assertThat(c.redisCluster()).isTrue();
        assertThat(c.seeds()).extracting(u -> u.getHost() + ":" + u.getPort())
                .containsExactly("10.0.0.1:7000", "10.0.0.2:7001", "10.0.0.3:7002");
        assertThat(c.seeds()).allSatisfy(u -> assertThat(new String(u.getCredentialsProvider().resolveCredentials().block().getPassword())).isEqualTo("s3cret"));
        assertThat(ConfigLoader.load(null, Map.of("cluster.redisUri", "rediss-cluster://h:7000")).cluster()
                .seeds().get(0).isSsl()).isTrue();
        assertThat(ConfigLoader.load(null, Map.of("cluster.redisUri", "redis://h:6379")).cluster().redisCluster())
                .isFalse();
    }

    @Test
    void aRedisClusterSeedListThatIsNotHostAndPortIsRefusedWithoutThePassword() {
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("cluster.redisUri", "redis-cluster://:s3cret@h:7000/2")))
                .isInstanceOf(ConfigException.class).hasMessageStartingWith("cluster.redisUri: redis-cluster://***@h:7000/2")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("cluster.redisUri", "redis-cluster://h:7000,,h2:7001")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("expected: redis-cluster://");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("cluster.redisUri", "redis-cluster://h:7000,h2:99999")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("99999");
    }

    @Test
    void replicasToAckIsOffByDefaultAndItsTimeoutMustStayBelowTheRedisTimeout() {
        Cluster d = ConfigLoader.load(null, Map.of()).cluster();
        assertThat(d.replicasToAck()).isZero();
        Cluster c = ConfigLoader.load(null, ConfigLoader.fromEnvironment(Map.of("PUSH_CLUSTER_REPLICAS_TO_ACK", "1",
                "PUSH_CLUSTER_REPLICAS_ACK_TIMEOUT", "250ms"))).cluster();
        assertThat(c.replicasToAck()).isEqualTo(1);
        assertThat(c.replicasAckTimeout()).hasMillis(250);
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("cluster.replicasToAck", "-1")))
                .isInstanceOf(ConfigException.class).hasMessage("cluster.replicasToAck: -1 (expected: 0..16)");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("cluster.replicasAckTimeout", "2s")))
                .isInstanceOf(ConfigException.class).hasMessageStartingWith("cluster.replicasAckTimeout: 2s");
    }

    @Test
    void idleTopicsAreUnfollowedAfterFiveMinutesByDefaultZeroMeansNeverAndBelowASecondIsRefused() {
        assertThat(ConfigLoader.load(null, Map.of()).cluster().idleTopicTimeout()).isEqualTo(Cluster.DEFAULT_IDLE_TOPIC_TIMEOUT)
                .hasMinutes(5);
        assertThat(ConfigLoader.load(null, ConfigLoader.fromEnvironment(Map.of("PUSH_CLUSTER_IDLE_TOPIC_TIMEOUT", "0s")))
                .cluster().idleTopicTimeout()).isZero();
        assertThat(ConfigLoader.load(null, Map.of("cluster.idleTopicTimeout", "30s")).cluster().idleTopicTimeout())
                .hasSeconds(30);
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("cluster.idleTopicTimeout", "500ms")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("cluster.idleTopicTimeout: 500ms (expected: 0s = never, or 1s..7d)");
        assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("cluster.idleTopicTimeout", "8d")))
                .isInstanceOf(ConfigException.class).hasMessageStartingWith("cluster.idleTopicTimeout: 8d");
    }
}
