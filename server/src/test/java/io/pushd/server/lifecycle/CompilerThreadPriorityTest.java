package io.pushd.server.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which threads are the JIT's, read from a {@code /proc/<pid>/task} tree (a copy of one here). */
class CompilerThreadPriorityTest {

    @TempDir
    Path tasks;

    private void task(int tid, String comm) throws Exception {
        Path t = Files.createDirectories(tasks.resolve(Integer.toString(tid)));
        Files.writeString(t.resolve("comm"), comm + "\n");
    }

    @Test
    void onlyTheC1AndC2CompilerThreadsAreFoundNotTheLoopsTheGcOrAThreadThatEnded() throws Exception {
        task(101, "java");
        task(102, "C2 CompilerThre");
        task(103, "C1 CompilerThre");
        task(104, "multiThreadIoEv");
        task(105, "G1 Conc#0");
        task(106, "C2 CompilerThre"); // a second one HotSpot added
        Files.createDirectories(tasks.resolve("107")); // ended: no comm any more

        assertThat(CompilerThreadPriority.compilerThreads(tasks)).containsExactlyInAnyOrder(102, 103, 106);
    }

    @Test
    void withoutACompilerThreadOrAThreadListNothingIsSetAndTheProblemIsSaid() throws Exception {
        task(101, "java");

        assertThat(CompilerThreadPriority.lower(19, tasks))
                .isEqualTo(new CompilerThreadPriority.Result(0, 19, "no JIT compiler thread found in " + tasks));
        CompilerThreadPriority.Result noProc = CompilerThreadPriority.lower(19, tasks.resolve("missing"));
        assertThat(noProc.threads()).isZero();
        assertThat(noProc.problem()).startsWith("cannot list this process's threads in " + tasks.resolve("missing"));
    }

    @Test
    void zeroLeavesThePrioritiesAlone() {
        assertThat(CompilerThreadPriority.lower(0)).isEqualTo(new CompilerThreadPriority.Result(0, 0, null));
    }
}
