package io.pushd.server.pipeline;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;

/**
 * The child handler of a port bound before the server has what its pipeline needs (a single node
 * binds before its store's recovery). The listening socket is bound with accepting paused, so a
 * client that connects meanwhile waits in the kernel's backlog instead of being refused, which
 * would double its backoff; accepting resumes once {@link #serve} has named the real initializer,
 * and each connection then gets the real pipeline.
 */
@ChannelHandler.Sharable
public final class DeferredInitializer extends ChannelInitializer<SocketChannel> {
    private volatile ChannelInitializer<SocketChannel> target;

    /** From now on connections get {@code initializer}'s pipeline. Call before accepting resumes. */
    public void serve(ChannelInitializer<SocketChannel> initializer) {
        this.target = initializer;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        ChannelInitializer<SocketChannel> t = target;
        if (t == null) {
            // not reached: the port accepts only after serve(); a connection without a pipeline
            // would hang, so it is closed (the client's reconnect finds the server serving)
            ch.close();
            return;
        }
        ch.pipeline().addLast(t); // runs its initChannel at once (the channel is registered), in place of this one
    }
}
