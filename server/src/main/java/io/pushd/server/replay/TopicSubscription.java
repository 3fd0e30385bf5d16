package io.pushd.server.replay;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ResetReason;
import io.pushd.protocol.ServerMessage;
import io.pushd.server.metrics.ServerMetrics;
import io.pushd.server.session.SessionSink;
import io.pushd.server.history.EventHistory;
import io.pushd.server.history.TopicRange;
import io.pushd.server.topic.EventFormat;
import io.pushd.server.topic.LiveBatch;
import io.pushd.server.topic.TopicHub;
import java.util.function.Consumer;

/**
 * One topic followed by one session: replays kept events after the requested ID, then hands
 * over to live events with no gap and no duplicate. It writes through the session's
 * {@link SessionSink}, so it works the same on every transport.
 *
 * <p>Everything runs on the sink's event loop. The rule that makes the hand-off exactly-once: a
 * live event is written only when its sequence is exactly {@code lastSeq + 1}; an older one is a
 * duplicate and dropped; a newer one (or any while catching up, or while the sink is not
 * writable) means "read from the store", which already holds it because the writer appends before
 * it fans out. So a slow reader falls back to the store instead of growing its outbound buffer.
 *
 * <p>A read the history cannot serve at hand ({@link EventHistory#NOT_AT_HAND}: a shared history
 * whose older events are in Redis) is {@link EventHistory#fetch fetched} without blocking the
 * event loop; until the page is back and written, this subscription stays catching up, so live
 * events are still only read, never written ahead of the replay.
 *
 * <p>Every ID it writes names the epoch it follows, and only events of that
 * epoch get one: its reads name the epoch ({@link EventHistory#EPOCH_CHANGED} when the history
 * was replaced meanwhile), a fetched page says its epoch, and a live event of another epoch (one
 * queued before the replacement) is dropped. A replaced history is a {@code reset unknown_epoch}.
 */
public final class TopicSubscription implements TopicHub.Subscriber {

    /**
     * Events per read from the store: with an appendable format they go out as one buffer, one
     * write (the store reads at most 256 at a time). Also the page asked of a fetch.
     */
    static final int REPLAY_READ = 256;
    /** Events replayed per step (a task, one flush) before the event loop is given back. */
    static final int REPLAY_STEP = 2 * REPLAY_READ;
    /** First capacity of a read's buffer: enough for a read of ~100-byte events; it grows for larger ones. */
    private static final int REPLAY_BUFFER = 64 * 1024;
    /**
     * About as many bytes of data as one read takes: its events are in server memory until the
     * socket takes them, so a read is cut to fewer events when they are large (256 events of
     * 64 KiB would be 16 MiB per client that does not read), judged by the largest of the last
     * read. About the channel's high-water mark: after such a read, a slow peer's channel is
     * unwritable and the replay waits for it.
     */
    static final int REPLAY_READ_BYTES = 256 * 1024;
    /** Events of the first read, before their size is known: 256 KiB at the largest publish (64 KiB). */
    static final int REPLAY_FIRST_READ = 4;

    /** STARTING: the history is loading the topic (a shared one, on first use); live events are only read later. */
    private enum Mode { STARTING, LIVE, CATCHING_UP, CLOSED }

    private final String topic;
    private final SessionSink sink;
    /** The topic's kept events: the one place this class reads history. */
    private final EventHistory history;
    private final TopicHub hub;
    private final ServerMetrics metrics;
    private final Consumer<RuntimeException> onFailure;
    /** The visitors of replay reads, made once rather than a bound method reference per read. */
    private final EventHistory.EventDataVisitor appendVisitor = this::appendReplayed;
    private final EventHistory.EventVisitor writeVisitor = this::writeReplayed;
    private Mode mode = Mode.LIVE;
    private long lastSeq;
    /** The events the next replay read asks for (see {@link #REPLAY_READ_BYTES}). */
    private int readEvents = REPLAY_FIRST_READ;
    /** The largest event data of the read under way, in bytes. */
    private int readLargest;
    /** The epoch {@link #lastSeq} belongs to; a shared history can replace a topic's (see {@link #epochChanged}). */
    private String epoch;
    private boolean stepScheduled;
    /** A fetch is out: no step runs until its page has been written (the connection's order). */
    private boolean fetching;
    /** While a replay read runs with an appendable format: the events read so far, one buffer. */
    private ByteBuf replayed;
    /** The frames in {@link #replayed} and their message bytes, counted when it is sent. */
    private int replayedFrames;
    private long replayedBytes;
    private String replayEpoch;
    /** Encodes the replay's frames while one runs (of {@link #replayEpoch}); dropped when the subscription goes live. */
    private EventFormat.ReplayAppender replayAppender;
    /** The epoch and position a {@link #fetch} asked from; a page for another one is not applied. */
    private String fetchEpoch;
    private long fetchAfter;
    private String appenderEpoch;

    /** begin() asked the history to catch up to the requested ID once already. */
    private boolean caughtUp;

    /**
     * @param onFailure told (after this subscription stopped) when it cannot go on, so the session
     *                  closes rather than go quiet
     */
    public TopicSubscription(String topic, SessionSink sink, EventHistory history, TopicHub hub, ServerMetrics metrics,
                             Consumer<RuntimeException> onFailure) {
        this.topic = topic;
        this.sink = sink;
        this.history = history;
        this.hub = hub;
        this.metrics = metrics;
        this.onFailure = onFailure;
    }

    /**
     * Registers for live events, then sends {@code subscribed}, a {@code reset} when the request
     * cannot be replayed completely, and starts the replay. Event loop only.
     */
    public void start(EventId after) {
        hub.subscribe(topic, this); // before reading the head: nothing published from now on is missed
        metrics.subscribed();
        java.util.concurrent.CompletableFuture<Void> ready = history.prepare(topic).toCompletableFuture();
        if (ready.isDone() && !ready.isCompletedExceptionally()) {
            begin(after);
            return;
        }
        beginWhen(ready, after);
    }

    /** Waits in STARTING (live events dropped: begin reads the head after them) until {@code ready}. */
    private void beginWhen(java.util.concurrent.CompletionStage<Void> ready, EventId after) {
        mode = Mode.STARTING;
        ready.whenComplete((v, failure) -> {
            try {
                sink.eventLoop().execute(() -> {
                    if (mode != Mode.STARTING) {
                        return; // closed meanwhile
                    }
                    mode = Mode.LIVE;
                    if (failure != null) {
                        fail(failure.getCause() instanceof RuntimeException re ? re
                                : failure instanceof RuntimeException re2 ? re2 : new IllegalStateException(failure));
                        return;
                    }
                    try {
                        begin(after);
                    } catch (RuntimeException e) {
                        fail(e);
                    }
                });
            } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
                // the event loop is gone, and the connection with it
            }
        });
    }

    private void begin(EventId after) {
        // the epoch before the range: a range read after it is of that epoch or of a later one,
        // which the first step or live event then finds (epochChanged); the other way round, a
        // new epoch with an old head would skip the new history's first events without a word
        String epoch = history.epoch(topic);
        TopicRange range = history.range(topic);
        if (after != null && !caughtUp && (!after.epoch().equals(epoch) || after.seq() > range.head())) {
            // ahead of what this node holds, or of an epoch it does not know: on a shared history
            // another node may have delivered it already; ask once before calling it the future
            // or unknown
            caughtUp = true;
            java.util.concurrent.CompletableFuture<Void> done =
                    history.catchUp(topic, after.epoch(), after.seq()).toCompletableFuture();
            if (!done.isDone() || done.isCompletedExceptionally()) {
                beginWhen(done, after);
                return;
            }
            epoch = history.epoch(topic);
            range = history.range(topic);
        }
        this.epoch = epoch;
        // id: where this subscription starts. The requested ID even when a reset follows, so a
        // client that stores every frame's id and drops here is told about the reset again.
        EventId position = after != null ? after : new EventId(epoch, range.head());
        sink.send(new ServerMessage.Subscribed(topic, range.headId(epoch), range.oldestId(epoch), epoch, position));
        lastSeq = range.head();
        if (after != null) {
            ResetReason reset = null;
            if (!after.epoch().equals(epoch)) {
                reset = ResetReason.UNKNOWN_EPOCH;
            } else if (after.seq() > range.head()) {
                reset = ResetReason.FUTURE;
            } else if (isLost(after.seq(), range)) {
                reset = ResetReason.EXPIRED;
            } else {
                lastSeq = after.seq();
            }
            if (reset != null) {
                sendReset(reset, range.head());
            }
        }
        if (lastSeq < range.head()) {
            mode = Mode.CATCHING_UP;
            scheduleStep();
        }
        sink.flush();
    }

    @Override
    public EventExecutor executor() {
        return sink.eventLoop();
    }

    @Override
    public EventFormat format() {
        return sink.format();
    }

    @Override
    public void onLive(LiveBatch events) {
        try {
            handleLive(events);
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    /**
     * Writes the events of the batch this subscription takes live, as runs of consecutive ones
     * (one write and flush per run: normally the whole batch); a run is written before anything
     * an event that breaks it may cause (a reset), so the connection's order is the events'.
     * Writability is asked once per run: a run (at most a task's events) may go past the
     * outbound buffer's high-water mark, and the next batch then catches up from the store.
     */
    private void handleLive(LiveBatch events) {
        int n = events.size();
        // once per batch, and only when live (a topic still loading is not asked): a shared history
        // may replace the epoch meanwhile, which the next batch sees
        String current = mode == Mode.LIVE ? history.epoch(topic) : null;
        int from = -1;
        for (int i = 0; i < n; i++) {
            long seq = events.seq(i);
            if (mode == Mode.LIVE && seq == lastSeq + 1 && current.equals(epoch) && events.epoch(i).equals(epoch)
                    && (from >= 0 || sink.isWritable())) {
                lastSeq = seq;
                if (from < 0) {
                    from = i;
                }
                continue;
            }
            if (from >= 0) {
                writeLive(events, from, i);
                from = -1;
            }
            skipLive(events.epoch(i), seq);
        }
        if (from >= 0) {
            writeLive(events, from, n);
        }
    }

    private void writeLive(LiveBatch events, int from, int to) {
        // SSE: a multi-topic stream's cursor names the topic; false: the connection is closing
        if (sink.sendLive(topic, events, from, to)) {
            events.delivered(from, to); // into the metrics once per batch, by the hub
        }
    }

    /** A live event not written: too early, of another epoch, a duplicate or a sign to catch up. */
    private void skipLive(String eventEpoch, long seq) {
        if (mode == Mode.STARTING) {
            return; // begin() reads the head after this: the event is replayed if it is after it
        }
        if (epochChanged()) {
            return;
        }
        if (!eventEpoch.equals(epoch)) {
            // fanned out before the history was replaced, delivered after a step moved this
            // subscription to the new epoch (the hub's queue runs behind the replay): its sequence
            // means nothing here, and written it would name the old history after the reset
            return;
        }
        if (mode == Mode.CLOSED || seq <= lastSeq) {
            return; // a duplicate of what the replay already sent
        }
        // a gap, or the sink is not writable: the store has it, the replay takes over
        mode = Mode.CATCHING_UP;
        scheduleStep();
    }

    /** True once the replay reached the head and live events are written as they come. */
    boolean isLive() {
        return mode == Mode.LIVE;
    }

    /** The sink became writable again: continue a paused replay. */
    public void onWritable() {
        if (mode == Mode.CATCHING_UP) {
            scheduleStep();
        }
    }

    public void close() {
        if (mode != Mode.CLOSED) {
            mode = Mode.CLOSED;
            hub.unsubscribe(topic, this);
            metrics.unsubscribed();
        }
    }

    private void scheduleStep() {
        if (!stepScheduled && !fetching && mode == Mode.CATCHING_UP) {
            stepScheduled = true;
            sink.eventLoop().execute(this::step);
        }
    }

    /** One bounded slice of replay; gives the event loop back between slices. */
    private void step() {
        stepScheduled = false;
        if (mode != Mode.CATCHING_UP || fetching || !sink.isActive()) {
            return;
        }
        try {
            catchUp();
        } catch (RuntimeException e) {
            fail(e);
        } catch (OutOfMemoryError e) { // direct memory: this subscription ends, the server goes on
            fail(new IllegalStateException("out of memory while replaying", e));
        }
    }

    /**
     * A subscription that cannot go on must not go quiet: stop it and let the session close
     * (1011), so the client reconnects and resumes from its last ID.
     */
    private void fail(RuntimeException e) {
        close();
        onFailure.accept(e);
    }

    private void catchUp() {
        TopicRange range = history.range(topic);
        if (epochChanged()) { // after the range: the same epoch now means the range was of it
            return;
        }
        if (isLost(lastSeq, range)) {
            sendReset(ResetReason.EXPIRED, range.head()); // retention overtook a slow reader
        }
        int n = 0;
        boolean appended = sink.replaysAppended();
        replayEpoch = epoch; // the history hands only events of it (else EPOCH_CHANGED)
        while (sink.isWritable()) {
            int read;
            int asked = readEvents;
            readLargest = 0;
            if (appended) {
                try {
                    read = history.readData(topic, epoch, lastSeq, asked, appendVisitor);
                } finally {
                    sendReplayed();
                }
            } else {
                read = history.read(topic, epoch, lastSeq, asked, writeVisitor);
            }
            sizeNextRead();
            if (read == EventHistory.EPOCH_CHANGED) {
                // replaced since the check above: nothing was read; reset to the new epoch
                sink.flush();
                if (!epochChanged()) {
                    scheduleStep();
                }
                return;
            }
            if (read == EventHistory.NOT_AT_HAND) {
                sink.flush();
                fetch();
                return;
            }
            n += read;
            if (read < asked || n >= REPLAY_STEP) {
                break;
            }
        }
        sink.flush();
        continueOrGoLive();
    }

    /** Sizes the next read by the largest event of the last one (see {@link #REPLAY_READ_BYTES}). */
    private void sizeNextRead() {
        if (readLargest > 0) {
            readEvents = Math.max(1, Math.min(REPLAY_READ, REPLAY_READ_BYTES / readLargest));
        }
    }

    private void continueOrGoLive() {
        if (lastSeq >= history.range(topic).head()) {
            mode = Mode.LIVE; // the events after this arrive as live offers, queued behind this task
            replayAppender = null; // an idle subscription keeps no replay state
            appenderEpoch = null;
        } else if (sink.isWritable()) {
            scheduleStep();
        }
        // else: onWritable() resumes
    }

    /** Asks the history for the events after {@link #lastSeq}; they are written on this event loop. */
    private void fetch() {
        fetching = true;
        fetchEpoch = epoch;
        fetchAfter = lastSeq;
        history.fetch(topic, lastSeq, readEvents).whenComplete((page, failure) -> {
            try {
                sink.eventLoop().execute(() -> fetched(page, failure));
            } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
                fetching = false; // the event loop is gone, and the connection with it
            }
        });
    }

    private void fetched(EventHistory.Fetched page, Throwable failure) {
        fetching = false;
        if (mode != Mode.CATCHING_UP || !sink.isActive()) {
            return;
        }
        try {
            if (failure != null) {
                Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                throw cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
            }
            if (epochChanged() || !page.epoch().equals(epoch)
                    || !fetchEpoch.equals(epoch) || fetchAfter != lastSeq) {
                // the history was replaced meanwhile, or a live event of the new epoch reset this
                // subscription while the page was on its way: the page follows another position,
                // and the next step reads from this one
                scheduleStep();
                return;
            }
            replayEpoch = epoch;
            readLargest = 0;
            if (sink.replaysAppended()) {
                try {
                    for (int i = 0; i < page.size(); i++) {
                        appendReplayed(page.seqs()[i], page.timestamps()[i], EventHistory.EventData.of(page.data()[i]));
                    }
                } finally {
                    sendReplayed();
                }
            } else {
                page.forEach(writeVisitor);
            }
            sizeNextRead();
            sink.flush();
            if (page.size() == 0 && lastSeq < history.range(topic).head() && !isLost(lastSeq, history.range(topic))) {
                // nothing came, yet the history says more is kept: look again shortly, not in a spin
                fetching = true;
                sink.eventLoop().schedule(() -> {
                    fetching = false;
                    scheduleStep();
                }, 100, java.util.concurrent.TimeUnit.MILLISECONDS);
                return;
            }
            continueOrGoLive();
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    private void writeReplayed(long seq, long ts, byte[] data) {
        readLargest = Math.max(readLargest, data.length);
        if (!nextReplayed(seq)) {
            return;
        }
        ByteBuf event = sink.format().encode(sink.alloc(), topic, new EventId(replayEpoch, seq), ts, data);
        metrics.delivered(sink.format().payloadBytes(event.readableBytes()), true);
        sink.sendEvent(topic, seq, event);
    }

    /**
     * Whole frames: the events of one read go out as one buffer, encoded in place from the store's
     * bytes (no {@code byte[]} and no write through the pipeline per event).
     */
    private void appendReplayed(long seq, long ts, EventHistory.EventData data) {
        readLargest = Math.max(readLargest, data.length());
        if (!nextReplayed(seq)) {
            return;
        }
        if (replayed == null) {
            // in long: 256 events of up to limits.maxPublishBytes (16 MiB) overflow an int
            long expected = (long) REPLAY_READ * (data.length() + topic.length() + 96);
            replayed = sink.alloc().directBuffer((int) Math.min(REPLAY_BUFFER, expected));
        }
        if (replayAppender == null || !replayEpoch.equals(appenderEpoch)) {
            replayAppender = sink.format().appender(topic, replayEpoch);
            appenderEpoch = replayEpoch;
        }
        int before = replayed.writerIndex();
        try {
            replayAppender.append(replayed, seq, ts, data);
        } catch (RuntimeException e) {
            replayed.writerIndex(before); // never half a frame on the wire: the frames before it still go
            throw e;
        }
        replayedFrames++;
        replayedBytes += sink.format().payloadBytes(replayed.writerIndex() - before);
    }

    private void sendReplayed() {
        if (replayed != null) {
            ByteBuf b = replayed;
            replayed = null;
            metrics.delivered(replayedFrames, replayedBytes, true);
            replayedFrames = 0;
            replayedBytes = 0;
            sink.sendEvent(b);
        }
    }

    /** True when {@code seq} is the next event to send (after a reset for a hole retention made). */
    private boolean nextReplayed(long seq) {
        if (seq > lastSeq + 1) {
            // Retention dropped events between two reads: say so rather than skip them.
            sendReset(ResetReason.EXPIRED, history.range(topic).head());
        }
        if (seq <= lastSeq) {
            return false;
        }
        lastSeq = seq;
        return true;
    }

    /**
     * A shared history lost the topic's history and gave it a new epoch (Redis came back with less
     * than was seen): nothing of the old epoch continues, so say {@code unknown_epoch} at the new
     * epoch's start and replay it from there. The local history never changes an epoch while running.
     */
    /**
     * The history was replaced while this subscription may be idle (live, no event coming): the
     * reset goes out now, then the new history from its start.
     */
    @Override
    public void onHistoryReplaced() {
        if (mode == Mode.LIVE) {
            epochChanged();
        } // catching up or fetching: its next step or page checks the epoch anyway
    }

    private boolean epochChanged() {
        String now = history.epoch(topic);
        if (now.equals(epoch) || mode == Mode.CLOSED) {
            return false;
        }
        epoch = now;
        sendReset(ResetReason.UNKNOWN_EPOCH, 0);
        sink.flush();
        mode = Mode.CATCHING_UP;
        scheduleStep();
        return true;
    }

    private void sendReset(ResetReason reason, long head) {
        sendReplayed(); // the events before the reset go first
        metrics.reset(reason);
        // this subscription's epoch, not the history's of this instant: the reset's ID and the
        // events that follow it must name the same history
        sink.send(new ServerMessage.Reset(topic, new EventId(epoch, head), reason));
        lastSeq = head;
    }

    /** True when events after {@code seq} are no longer all kept. */
    private static boolean isLost(long seq, TopicRange range) {
        if (seq >= range.head()) {
            return false;
        }
        return range.oldest() == 0 || seq < range.oldest() - 1;
    }
}
