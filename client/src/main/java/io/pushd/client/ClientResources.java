package io.pushd.client;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The event loops many {@link PushClient}s share: thousands of clients run on a few threads, each
 * client pinned to one loop for its whole life (so its callbacks are ordered and need no locks),
 * and its timers are tasks on that loop, not threads. Epoll when available, else NIO.
 *
 * <p>Closing the resources closes every client created from them, then stops the threads.
 */
public final class ClientResources implements AutoCloseable {

    private final EventLoopGroup group;
    private final Class<? extends SocketChannel> channelType;
    private final String transport;
    private final int ioThreads;
    private final Set<PushClient> clients = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();

    private ClientResources(int ioThreads, boolean preferEpoll) {
        if (ioThreads < 1) {
            throw new IllegalArgumentException("ioThreads: " + ioThreads + " (expected: >= 1)");
        }
        boolean epoll = preferEpoll && Epoll.isAvailable();
        IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.channelType = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        this.transport = epoll ? "epoll" : "nio";
        this.ioThreads = ioThreads;
        this.group = new MultiThreadIoEventLoopGroup(ioThreads, new DefaultThreadFactory("push-client", true), io);
    }

    /** One I/O thread per core. */
    public static ClientResources create() {
        return create(Runtime.getRuntime().availableProcessors());
    }

    public static ClientResources create(int ioThreads) {
        return new ClientResources(ioThreads, true);
    }

    /** {@code preferEpoll false} forces NIO (for comparing transports). */
    public static ClientResources create(int ioThreads, boolean preferEpoll) {
        return new ClientResources(ioThreads, preferEpoll);
    }

    /** A new client on the next event loop (round robin); call {@link PushClient#start()} to connect. */
    public PushClient newClient(PushClientOptions options, PushListener listener) {
        if (closed.get()) {
            throw new IllegalStateException("newClient: resources are closed");
        }
        PushClient client = new PushClient(this, (EventLoop) group.next(), options, listener);
        clients.add(client);
        return client;
    }

    /** Clients created and not closed yet. */
    public int clientCount() {
        return clients.size();
    }

    /** {@code epoll} or {@code nio}. */
    public String transport() {
        return transport;
    }

    public int ioThreads() {
        return ioThreads;
    }

    Class<? extends SocketChannel> channelType() {
        return channelType;
    }

    void forget(PushClient client) {
        clients.remove(client);
    }

    /** Closes every client (each sends its close frame), then stops the event loops. Blocks up to ~5 s. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (PushClient c : new ArrayList<>(clients)) {
            c.close();
        }
        // The quiet period lets the clients' close frames go out before the loops stop.
        group.shutdownGracefully(100, 2_000, TimeUnit.MILLISECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
