package io.pushd.server.lifecycle;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.function.Function;

/**
 * Which of HotSpot's JIT compilers this JVM runs, for the start-up log: with
 * {@code -XX:TieredStopAtLevel=1} (C1 only; see the README's Performance section) the fan-out and
 * replay cost less in the minutes after a start, because C2 never compiles on the core that serves
 * the returning clients, but the code that leans on C2's intrinsics is several times slower:
 * AES-GCM (TLS on the daemon, ~12× the CPU per record on the test machine), RSA signatures
 * (RS256/PS256 tokens, ~6×) and SHA-256 (HS256, ~9×). The start says so once, and warns when TLS
 * runs on the daemon.
 */
public final class JitCompilers {

    /** C1 and C2 (the default), C1 only, or not known (another JVM, or the flags cannot be read). */
    public enum Mode { FULL, C1_ONLY, UNKNOWN }

    private JitCompilers() {
    }

    /** This JVM's mode, read from its flags. */
    public static Mode current() {
        HotSpotDiagnosticMXBean hotspot;
        try {
            hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        } catch (RuntimeException | LinkageError e) {
            return Mode.UNKNOWN;
        }
        if (hotspot == null) {
            return Mode.UNKNOWN;
        }
        return of(name -> {
            try {
                return hotspot.getVMOption(name).getValue();
            } catch (IllegalArgumentException noSuchFlag) {
                return null;
            }
        });
    }

    /** The mode the flags' values give ({@code flag} answers a flag's value, null when there is none). */
    static Mode of(Function<String, String> flag) {
        String tiered = flag.apply("TieredCompilation");
        String stopAt = flag.apply("TieredStopAtLevel");
        String mode = flag.apply("CompilationMode");
        if (tiered == null || stopAt == null) {
            return Mode.UNKNOWN;
        }
        if ("quick-only".equals(mode)) {
            return Mode.C1_ONLY;
        }
        int level;
        try {
            level = Integer.parseInt(stopAt);
        } catch (NumberFormatException e) {
            return Mode.UNKNOWN;
        }
        // without tiered compilation HotSpot runs C2 alone (TieredStopAtLevel is then ignored)
        return Boolean.parseBoolean(tiered) && level >= 1 && level <= 3 ? Mode.C1_ONLY : Mode.FULL;
    }

    /**
     * What the start-up log says of {@code mode}: null for the default; for C1 only a line, and a
     * warning when {@code tlsOnTheDaemon}.
     */
    static String describe(Mode mode, boolean tlsOnTheDaemon) {
        if (mode != Mode.C1_ONLY) {
            return null;
        }
        String line = "JIT: C1 only (C2 off, e.g. -XX:TieredStopAtLevel=1): cheaper fan-out and replay after a start, "
                + "slower RSA and SHA-256 token checks and TLS";
        return tlsOnTheDaemon
                ? line + "; TLS on the daemon (tls.certFile) costs ~12x the CPU per record without C2's AES "
                        + "intrinsics: run it with the full JIT, or end TLS at a proxy"
                : line;
    }

    /** Whether {@link #describe} is a warning rather than information. */
    static boolean warns(Mode mode, boolean tlsOnTheDaemon) {
        return mode == Mode.C1_ONLY && tlsOnTheDaemon;
    }

    /** Logs the JVM's compilers once at start (nothing for the default). */
    public static void log(org.slf4j.Logger log, boolean tlsOnTheDaemon) {
        Mode mode = current();
        String text = describe(mode, tlsOnTheDaemon);
        if (text == null) {
            return;
        }
        if (warns(mode, tlsOnTheDaemon)) {
            log.warn(text);
        } else {
            log.info(text);
        }
    }
}
