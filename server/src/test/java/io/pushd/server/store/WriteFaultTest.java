package io.pushd.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pushd.server.testing.ScratchMount;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.openhft.chronicle.core.time.SystemTimeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the guard blinded (it believes the disk is empty and cannot reserve blocks), a full tmpfs
 * makes the mapped file really fault. The fault must cost nothing acknowledged: the append fails,
 * what was stored stays readable with nothing blocked behind it, and once space is freed the
 * writer goes on.
 */
class WriteFaultTest {

    @TempDir
    Path tmp;

    private ScratchMount mount;
    private ChronicleEventStore store;

    @AfterEach
    void cleanUp() throws Exception {
        if (store != null) {
            store.close();
        }
        if (mount != null) {
            mount.close();
        }
    }

    static StorageGuard blind(Path dataDir) {
        StorageGuard.Allocator none = new StorageGuard.Allocator() {
            @Override
            public long open(File file) {
                return -1;
            }

            @Override
            public Result allocate(long handle, long offset, long length) {
                return Result.UNSUPPORTED;
            }

            @Override
            public void close(long handle) {
            }
        };
        return new StorageGuard(dataDir, 0, () -> Long.MAX_VALUE, none, System::nanoTime);
    }

    @Test
    void aFaultInTheMappedFileFailsTheAppendAndBlocksNoReaderAndNoLaterAppend() throws Exception {
        mount = ScratchMount.tmpfs(tmp, 20);
        Path data = mount.dir().resolve("data");
        store = new ChronicleEventStore(data, Duration.ofHours(24), 100_000, Duration.ofHours(24), false,
                SystemTimeProvider.INSTANCE, WriteFaultTest::blind);
        byte[] event = ("{\"pad\":\"" + "x".repeat(5000) + "\"}").getBytes(StandardCharsets.UTF_8);
        store.append("t", 1, 1, null, event);
        Path filler = mount.fill("filler", 2L << 20);

        long seq = 2;
        Throwable fault = null;
        for (; seq < 5_000 && fault == null; seq++) {
            try {
                store.append("t", seq, seq, null, event);
            } catch (Throwable t) {
                fault = t;
            }
        }
        long stored = seq - 2;
        assertThat(fault).as("the append that met the full disk").isInstanceOf(StorageFullException.class);
        assertThat(store.range("t").head()).isEqualTo(stored);
        assertThat(readAll()).as("every stored event, nothing blocked").hasSize((int) stored);

        Files.delete(filler);
        for (long s = stored + 1; s <= stored + 20; s++) {
            store.append("t", s, s, null, event);
        }
        assertThat(readAll()).hasSize((int) stored + 20);
        store.close();
        store = new ChronicleEventStore(data, Duration.ofHours(24), 100_000, Duration.ofHours(24), false,
                SystemTimeProvider.INSTANCE);
        assertThat(store.range("t").head()).as("head after a restart").isEqualTo(stored + 20);
        assertThat(readAll()).hasSize((int) stored + 20);
    }

    private List<Long> readAll() {
        List<Long> seqs = new ArrayList<>();
        long last = 0;
        while (true) {
            int n = store.read("t", last, 1000, (s, ts, d) -> seqs.add(s));
            if (n == 0) {
                return seqs;
            }
            last = seqs.get(seqs.size() - 1);
        }
    }
}
