package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.function.BiConsumer;

/** A subscriber whose frames are handled on the calling thread, for hub and publisher tests. */
public final class InlineSubscriber implements TopicHub.Subscriber {

    private final BiConsumer<Long, ByteBuf> handler;

    public InlineSubscriber(BiConsumer<Long, ByteBuf> handler) {
        this.handler = handler;
    }

    @Override
    public EventExecutor executor() {
        return ImmediateEventExecutor.INSTANCE;
    }

    /** Hands each event to the handler with a reference of its own, which the handler releases. */
    @Override
    public void onLive(LiveBatch events) {
        for (int i = 0; i < events.size(); i++) {
            handler.accept(events.seq(i), events.event(i).retainedDuplicate());
        }
    }
}
