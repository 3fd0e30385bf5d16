package io.pushd.server.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.channel.embedded.EmbeddedChannel;
import io.pushd.server.metrics.ServerMetrics;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A flood of failed accepts makes one log line per interval and a counter, not a line each. */
class AcceptErrorHandlerTest {

    final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    final Logger logger = (Logger) LoggerFactory.getLogger(AcceptErrorHandler.class);
    final ServerMetrics metrics = new ServerMetrics();

    @BeforeEach
    void capture() {
        logged.start();
        logger.addAppender(logged);
    }

    @AfterEach
    void release() {
        logger.detachAppender(logged);
    }

    @Test
    void aThousandFailedAcceptsLogOneWarningAndCountEveryOne() {
        long t0 = System.nanoTime();
        AcceptErrorHandler handler = new AcceptErrorHandler(metrics, t0);
        EmbeddedChannel listener = new EmbeddedChannel(handler);
        for (int i = 0; i < 1_000; i++) {
            listener.pipeline().fireExceptionCaught(new IOException("accept(..) failed: Too many open files"));
        }
        listener.checkException(); // nothing reached the pipeline's tail (which would log each one)
        assertThat(logged.list).hasSize(1);
        assertThat(logged.list.get(0).getLevel()).isEqualTo(Level.WARN);
        assertThat(logged.list.get(0).getFormattedMessage()).contains("Too many open files");
        assertThat(logged.list.get(0).getThrowableProxy()).as("no stack trace").isNull();
        assertThat(refused()).isEqualTo(1_000);

        // the next line comes one interval later and carries what happened since
        handler.failed(new IOException("Too many open files"), t0 + TimeUnit.SECONDS.toNanos(11));
        assertThat(logged.list).hasSize(2);
        assertThat(logged.list.get(1).getFormattedMessage()).startsWith("1000 accept");
        assertThat(refused()).isEqualTo(1_001);
        assertThat(listener.finish()).isFalse();
    }

    private double refused() {
        return metrics.registry().get("push.connections.refused").tag("reason", "accept_failed").counter().count();
    }
}
