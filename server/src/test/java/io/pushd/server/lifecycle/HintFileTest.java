package io.pushd.server.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HintFileTest {

    @TempDir
    Path dir;

    @Test
    void aMissingUnreadableOrNegativeNumberReadsAsUnknown() throws Exception {
        HintFile file = new HintFile(dir.resolve("warmup-ms"));
        assertThat(file.read(-7)).isEqualTo(-7);
        Files.writeString(dir.resolve("warmup-ms"), "4.5 s");
        assertThat(file.read(-7)).isEqualTo(-7);
        Files.writeString(dir.resolve("warmup-ms"), "-12");
        assertThat(file.read(-7)).isEqualTo(-7);
        Files.writeString(dir.resolve("warmup-ms"), " 4513\n");
        assertThat(file.read(-7)).isEqualTo(4513);
    }

    @Test
    void theLastNumberWrittenIsWhatTheNextStartReadsAndNoTemporaryFileIsLeft() throws Exception {
        HintFile file = new HintFile(dir.resolve("warmup-ms"));
        assertThat(file.write(9_200)).isTrue();
        assertThat(file.write(4_513)).isTrue();
        assertThat(new HintFile(dir.resolve("warmup-ms")).read(0)).isEqualTo(4_513);
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("warmup-ms");
        }
    }

    @Test
    void aFileThatCannotBeWrittenIsReportedNotThrown() throws Exception {
        Files.createDirectory(dir.resolve("warmup-ms")); // a directory where the file should be
        assertThat(new HintFile(dir.resolve("warmup-ms")).write(1)).isFalse();
    }
}
