package io.pushd.server.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConnectionCountCheckpointTest {

    @TempDir
    Path dataDir;

    @Test
    void aMissingOrUnreadableFileMeansNoClientsExpected() throws Exception {
        ConnectionCountCheckpoint checkpoint = new ConnectionCountCheckpoint(dataDir);
        assertThat(checkpoint.read()).isZero();
        Files.writeString(dataDir.resolve("connections"), "not a number");
        assertThat(checkpoint.read()).isZero();
    }

    @Test
    void theLatestCountIsWhatTheNextStartReads() {
        ConnectionCountCheckpoint checkpoint = new ConnectionCountCheckpoint(dataDir);
        checkpoint.write(10);
        checkpoint.write(1_000);
        assertThat(new ConnectionCountCheckpoint(dataDir).read()).isEqualTo(1_000);
    }

    @Test
    void theDrainsCountIsNotReplacedByTheConnectionsItIsClosing() {
        ConnectionCountCheckpoint checkpoint = new ConnectionCountCheckpoint(dataDir);
        checkpoint.write(1_000);
        checkpoint.writeFinal(1_000);
        checkpoint.write(200); // the periodic refresh, while the drain closes them
        checkpoint.write(0);
        assertThat(new ConnectionCountCheckpoint(dataDir).read()).isEqualTo(1_000);
    }
}
