package io.pushd.server.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.pushd.server.lifecycle.JitCompilers.Mode;
import java.lang.management.ManagementFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JitCompilersTest {

    private static Mode of(Map<String, String> flags) {
        return JitCompilers.of(flags::get);
    }

    @Test
    void tieredUpToLevelFourIsTheFullJit() {
        assertThat(of(Map.of("TieredCompilation", "true", "TieredStopAtLevel", "4", "CompilationMode", "default")))
                .isEqualTo(Mode.FULL);
    }

    @Test
    void stoppingAtLevelOneTwoOrThreeIsC1Only() {
        for (String level : new String[] {"1", "2", "3"}) {
            assertThat(of(Map.of("TieredCompilation", "true", "TieredStopAtLevel", level))).as(level)
                    .isEqualTo(Mode.C1_ONLY);
        }
        assertThat(of(Map.of("TieredCompilation", "true", "TieredStopAtLevel", "4", "CompilationMode", "quick-only")))
                .isEqualTo(Mode.C1_ONLY);
    }

    @Test
    void withoutTieredCompilationTheStopLevelIsIgnoredAndC2Runs() {
        assertThat(of(Map.of("TieredCompilation", "false", "TieredStopAtLevel", "1"))).isEqualTo(Mode.FULL);
    }

    @Test
    void flagsThatCannotBeReadAreUnknownAndSayNothing() {
        assertThat(of(Map.of())).isEqualTo(Mode.UNKNOWN);
        assertThat(of(Map.of("TieredCompilation", "true", "TieredStopAtLevel", "x"))).isEqualTo(Mode.UNKNOWN);
        assertThat(JitCompilers.describe(Mode.UNKNOWN, true)).isNull();
        assertThat(JitCompilers.describe(Mode.FULL, true)).isNull();
    }

    @Test
    void c1OnlyIsInformationAndAWarningWithTlsOnTheDaemon() {
        assertThat(JitCompilers.describe(Mode.C1_ONLY, false)).startsWith("JIT: C1 only").doesNotContain("tls.certFile");
        assertThat(JitCompilers.warns(Mode.C1_ONLY, false)).isFalse();
        assertThat(JitCompilers.describe(Mode.C1_ONLY, true)).contains("tls.certFile").contains("~12x");
        assertThat(JitCompilers.warns(Mode.C1_ONLY, true)).isTrue();
    }

    @Test
    void thisJvmIsReadFromItsOwnFlags() {
        boolean c1Only = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .anyMatch(a -> a.matches("-XX:TieredStopAtLevel=[123]"));
        assertThat(JitCompilers.current()).isEqualTo(c1Only ? Mode.C1_ONLY : Mode.FULL);
    }
}
