package io.pushd.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import org.junit.jupiter.api.Test;

/** Which start-up failures of cluster mode are Redis refusing us (exit 2) and which are Redis not there yet (exit 1). */
class RedisRefusalTest {

    @Test
    void aRefusedLoginFoundAnywhereInTheCausesIsARefusal() {
        RedisConnectionException e = new RedisConnectionException("Unable to connect to 127.0.0.1:6379",
                new RedisCommandExecutionException("WRONGPASS invalid username-password pair or user is disabled."));
        assertThat(PushServerMain.redisRefusal(e)).startsWith("WRONGPASS");

        RedisConnectionException closed = new RedisConnectionException("Connection closed prematurely");
        closed.addSuppressed(new RedisCommandExecutionException("NOAUTH Authentication required."));
        assertThat(PushServerMain.redisRefusal(closed)).startsWith("NOAUTH");
    }

    @Test
    void aRedisStillLoadingOrAClusterStillFormingIsNotARefusal() {
        assertThat(PushServerMain.redisRefusal(new RedisConnectionException("x",
                new RedisCommandExecutionException("LOADING Redis is loading the dataset in memory")))).isNull();
        assertThat(PushServerMain.redisRefusal(new RedisConnectionException("x",
                new RedisCommandExecutionException("CLUSTERDOWN The cluster is down")))).isNull();
        assertThat(PushServerMain.redisRefusal(new RedisConnectionException("Connection refused"))).isNull();
    }
}
