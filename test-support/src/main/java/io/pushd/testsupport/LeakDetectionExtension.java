package io.pushd.testsupport;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * Fails a test class when Netty's (paranoid) leak detector reported a leaked buffer while it ran.
 * Registered for every test class of every module through JUnit's extension auto-detection
 * (this jar's META-INF/services; auto-detection is switched on in the parent POM).
 */
public final class LeakDetectionExtension implements BeforeAllCallback, AfterAllCallback {

    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static volatile boolean installed;

    private static synchronized void install() {
        if (installed) {
            return;
        }
        Logger detector = (Logger) LoggerFactory.getLogger("io.netty.util.ResourceLeakDetector");
        AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent e) {
                if (e.getFormattedMessage().contains("LEAK")) {
                    LEAKS.add(e.getFormattedMessage());
                }
            }
        };
        appender.setContext(detector.getLoggerContext());
        appender.start();
        detector.addAppender(appender);
        installed = true;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        install();
        LEAKS.clear();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        // Leaks are reported when a leaked buffer is collected and a later allocation looks.
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
            for (int j = 0; j < 64; j++) {
                ByteBuf a = PooledByteBufAllocator.DEFAULT.directBuffer(16);
                ByteBuf b = UnpooledByteBufAllocator.DEFAULT.heapBuffer(16);
                a.release();
                b.release();
            }
        }
        if (!LEAKS.isEmpty()) {
            String first = LEAKS.get(0);
            LEAKS.clear();
            throw new AssertionError("Netty reported a leaked buffer in " + context.getDisplayName() + ":\n" + first);
        }
    }
}
