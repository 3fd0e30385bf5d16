package io.pushd.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.PushServerMain;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Start-up in cluster mode with a Redis that cannot be used: exit 2 and one line, like a bad key. */
class ClusterStartTest {

    @TempDir
    Path dir;

    @Test
    void anUnreachableRedisAtStartExitsWithCodeTwoAndOneLineWithoutThePassword() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream saved = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = new CommandLine(new PushServerMain()).execute("--port", "0", "--data-dir", dir.toString(),
                    "--set", "cluster.redisUri=redis://user:s3cret@127.0.0.1:" + port,
                    "--set", "cluster.redisTimeout=500ms");
        } finally {
            System.setErr(saved);
        }
        String stderr = err.toString(StandardCharsets.UTF_8);
        assertThat(code).as(stderr).isEqualTo(2);
        assertThat(stderr).contains("cluster error: cannot use Redis at redis://***@127.0.0.1:" + port)
                .doesNotContain("s3cret");
    }
}
