package io.pushd.server.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The one owner of autoRead, step by step on an EmbeddedChannel. */
class BackpressureHandlerTest {

    EmbeddedChannel channel;

    @AfterEach
    void tearDown() {
        channel.finishAndReleaseAll();
    }

    @Test
    void readingPausesWhileTheChannelIsUnwritableAndExplicitReadsAreHeldBack() {
        AtomicInteger reads = new AtomicInteger();
        channel = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
            @Override
            public void read(ChannelHandlerContext ctx) {
                reads.incrementAndGet();
                ctx.read();
            }
        }, new BackpressureHandler());
        channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(8, 16));
        channel.write(Unpooled.wrappedBuffer(new byte[64])); // queued, not flushed: over the high water mark
        assertThat(channel.isWritable()).isFalse();
        assertThat(channel.config().isAutoRead()).isFalse();
        int before = reads.get();
        channel.read(); // what Netty's WebSocket protocol handler does after answering a ping
        assertThat(reads.get()).as("no read reaches the socket while paused").isEqualTo(before);
        channel.flush(); // the peer caught up
        assertThat(channel.isWritable()).isTrue();
        assertThat(channel.config().isAutoRead()).isTrue();
        assertThat(reads.get()).as("resuming reads again").isGreaterThan(before);
        ReferenceCountUtil.release(channel.readOutbound());
    }

    @Test
    void readingResumesOnlyWhenEveryReasonIsLifted() {
        BackpressureHandler backpressure = new BackpressureHandler();
        channel = new EmbeddedChannel(backpressure);
        backpressure.pause(BackpressureHandler.Reason.REQUESTS_QUEUED);
        backpressure.pause(BackpressureHandler.Reason.UNWRITABLE);
        backpressure.resume(BackpressureHandler.Reason.UNWRITABLE);
        assertThat(channel.config().isAutoRead()).isFalse();
        backpressure.resume(BackpressureHandler.Reason.REQUESTS_QUEUED);
        assertThat(channel.config().isAutoRead()).isTrue();
        assertThat(backpressure.isPaused()).isFalse();
    }

    @Test
    void theHeartbeatDoesNotCloseAPeerWhoseAnswersCannotBeReadWhileReadingIsPaused() {
        BackpressureHandler backpressure = new BackpressureHandler();
        HeartbeatHandler heartbeat = new HeartbeatHandler(Duration.ofMillis(100), Duration.ofMillis(100));
        channel = new EmbeddedChannel(backpressure, heartbeat);
        heartbeat.start(channel.pipeline().context(heartbeat));
        backpressure.pause(BackpressureHandler.Reason.UNWRITABLE); // the peer's pongs stay in the socket
        for (int i = 0; i < 5; i++) {
            channel.advanceTimeBy(100, TimeUnit.MILLISECONDS);
            channel.runScheduledPendingTasks();
        }
        assertThat(channel.isActive()).as("silence while paused does not count").isTrue();
        assertThat((Object) channel.readOutbound()).isInstanceOf(PingWebSocketFrame.class);

        backpressure.resume(BackpressureHandler.Reason.UNWRITABLE); // reading again, and still silent
        for (int i = 0; i < 5 && channel.isActive(); i++) {
            channel.advanceTimeBy(100, TimeUnit.MILLISECONDS);
            channel.runScheduledPendingTasks();
        }
        assertThat(channel.isActive()).as("a peer silent while we read is closed").isFalse();
    }
}
