package io.pushd.server.auth;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/** Every log line of the JVM while open, with auth's loggers turned to TRACE so nothing hides below the level. */
final class LogCapture implements AutoCloseable {

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    private final Logger auth = (Logger) LoggerFactory.getLogger("io.pushd.server.auth");
    private final Logger tls = (Logger) LoggerFactory.getLogger("io.pushd.server.tls");
    private final Level authLevel = auth.getLevel();
    private final Level tlsLevel = tls.getLevel();

    LogCapture() {
        appender.start();
        root.addAppender(appender);
        auth.setLevel(Level.TRACE);
        tls.setLevel(Level.TRACE);
    }

    /**
     * The events so far. Other threads append while a test reads (a key source's poller): the list
     * is copied under the appender's lock, which {@code AppenderBase.doAppend} holds as it adds;
     * reading it unlocked threw ConcurrentModificationException under CI load.
     */
    private List<ILoggingEvent> events() {
        synchronized (appender) {
            return new ArrayList<>(appender.list);
        }
    }

    /** Each event as text: level, logger, formatted message, arguments, and the whole throwable chain. */
    List<String> lines() {
        List<String> out = new ArrayList<>();
        for (ILoggingEvent e : events()) {
            StringBuilder sb = new StringBuilder().append(e.getLevel()).append(' ').append(e.getLoggerName())
                    .append(" - ").append(e.getFormattedMessage());
            if (e.getArgumentArray() != null) {
                for (Object a : e.getArgumentArray()) {
                    sb.append(" | ").append(a);
                }
            }
            for (IThrowableProxy t = e.getThrowableProxy(); t != null; t = t.getCause()) {
                sb.append("\n").append(t.getClassName()).append(": ").append(t.getMessage());
                for (StackTraceElementProxy s : t.getStackTraceElementProxyArray()) {
                    sb.append("\n\t").append(s);
                }
            }
            out.add(sb.toString());
        }
        return out;
    }

    List<String> messages(Level level) {
        return events().stream().filter(e -> e.getLevel() == level).map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Override
    public void close() {
        root.detachAppender(appender);
        auth.setLevel(authLevel);
        tls.setLevel(tlsLevel);
    }
}
