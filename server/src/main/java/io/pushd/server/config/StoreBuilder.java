package io.pushd.server.config;

import java.time.Duration;

/** A changed copy of a {@link ServerConfig.Store}, from {@link ServerConfig.Store#toBuilder()}. */
public final class StoreBuilder {

    private String dataDir;
    private Duration retentionAge;
    private long retentionCount;
    private Duration dedupeWindow;
    private boolean fsync;
    private Duration retentionCheckInterval;
    private long minFreeBytes;
    private boolean replayWarmup;
    private boolean appendOnEventLoop;

    StoreBuilder(ServerConfig.Store from) {
        dataDir = from.dataDir();
        retentionAge = from.retentionAge();
        retentionCount = from.retentionCount();
        dedupeWindow = from.dedupeWindow();
        fsync = from.fsync();
        retentionCheckInterval = from.retentionCheckInterval();
        minFreeBytes = from.minFreeBytes();
        replayWarmup = from.replayWarmup();
        appendOnEventLoop = from.appendOnEventLoop();
    }

    public StoreBuilder dataDir(String value) {
        dataDir = value;
        return this;
    }

    public StoreBuilder retentionAge(Duration value) {
        retentionAge = value;
        return this;
    }

    public StoreBuilder retentionCount(long value) {
        retentionCount = value;
        return this;
    }

    public StoreBuilder dedupeWindow(Duration value) {
        dedupeWindow = value;
        return this;
    }

    public StoreBuilder fsync(boolean value) {
        fsync = value;
        return this;
    }

    public StoreBuilder retentionCheckInterval(Duration value) {
        retentionCheckInterval = value;
        return this;
    }

    public StoreBuilder minFreeBytes(long value) {
        minFreeBytes = value;
        return this;
    }

    public StoreBuilder replayWarmup(boolean value) {
        replayWarmup = value;
        return this;
    }

    public StoreBuilder appendOnEventLoop(boolean value) {
        appendOnEventLoop = value;
        return this;
    }

    /** @throws ConfigException like the record's constructor, naming the first key out of range */
    public ServerConfig.Store build() {
        return new ServerConfig.Store(dataDir, retentionAge, retentionCount, dedupeWindow, fsync, retentionCheckInterval, minFreeBytes,
                replayWarmup, appendOnEventLoop);
    }
}
