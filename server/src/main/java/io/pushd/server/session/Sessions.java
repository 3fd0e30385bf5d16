package io.pushd.server.session;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** The admitted sessions of every transport, as the drain and the metrics see them. Thread-safe. */
public final class Sessions {

    private final Set<Session> open = ConcurrentHashMap.newKeySet();

    void add(Session s) {
        open.add(s);
    }

    void remove(Session s) {
        open.remove(s);
    }

    public int size() {
        return open.size();
    }

    /** The admitted sessions of one transport; counts them (at scrape time). */
    public int size(String transport) {
        int n = 0;
        for (Session s : open) {
            if (s.transport().equals(transport)) {
                n++;
            }
        }
        return n;
    }

    /** The sessions open now; the set may change right after. */
    public List<Session> snapshot() {
        return List.copyOf(open);
    }

    /** Waits until every one of {@code sessions} has disconnected, at most {@code timeout}. */
    public static void awaitClosed(Collection<Session> sessions, Duration timeout) {
        CompletableFuture<?>[] closed = sessions.stream().map(Session::closed).toArray(CompletableFuture[]::new);
        try {
            CompletableFuture.allOf(closed).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // the caller goes on regardless: sockets still open are closed with the event loops
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
