package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The test Redis helpers start a server of their own or say they could not: a port found free
 * can be taken before {@code redis-server} binds it, and a PING is then answered by whoever holds
 * it (CI once created a cluster out of another test fork's plain Redis).
 */
class RedisProcessTest {

    @TempDir
    Path dir;

    @Test
    void aRedisServerThatFindsItsPortTakenIsToldApartFromTheOneThatHoldsIt() throws Exception {
        try (RedisProcess holder = RedisProcess.start(dir)) {
            int taken = URI.create(holder.uri()).getPort();
            Path log = dir.resolve("second.log");
            Process second = new ProcessBuilder("redis-server", "--port", Integer.toString(taken), "--bind", "127.0.0.1",
                    "--save", "", "--dir", dir.toString())
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                assertThat(RedisProcess.awaitOwnStart(second, log)).as("the second server did not start").isFalse();
                assertThat(holder.cli("PING").trim()).as("the holder still answers").isEqualTo("PONG");
            } finally {
                second.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }
}
