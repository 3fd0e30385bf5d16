package io.pushd.server.auth;

import io.pushd.server.config.ConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keys tokens are checked against: the JWK set of {@code auth.jwt.jwksFile}, reloaded when
 * the file changes, and of {@code auth.jwt.jwksUrl}, fetched every {@code refreshInterval}; the
 * current set is both together. {@link #current()} is a volatile read, so verification on an
 * event loop never waits for a file or the network.
 *
 * <p>Threads: one daemon thread polls the file (a {@code stat} every {@code pollInterval}; the
 * file is read once a change has stayed put for one poll, so a half-written file is not read);
 * another fetches the URL with the JDK's HttpClient. A file or a document that does not parse
 * keeps the keys loaded before and logs one WARN per change, naming keys only by {@code kid} and
 * type. A token with an unknown {@code kid} asks for an early fetch of the URL (at most one per
 * {@link #MIN_EARLY_FETCH_GAP}), which is how a key rotated at the identity provider is picked up
 * before the next refresh.
 */
public final class KeySource implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KeySource.class);

    /** A JWK set is a few KiB; anything much larger is not one. */
    static final int MAX_DOCUMENT_BYTES = 1 << 20;
    static final Duration MIN_EARLY_FETCH_GAP = Duration.ofSeconds(30);
    static final Duration FETCH_TIMEOUT = Duration.ofSeconds(10);
    /** How soon a failed fetch (at start or later) is retried, when sooner than the refresh interval. */
    static final Duration RETRY_INTERVAL = Duration.ofSeconds(10);

    private final Path file;
    private final URI url;
    private final Duration refreshInterval;
    private final ScheduledExecutorService filePoller;
    private final ScheduledExecutorService fetcher;
    private final HttpClient http;
    private final java.util.concurrent.ExecutorService httpThreads;
    private final Duration minEarlyFetchGap;
    /** {@link #FETCH_TIMEOUT}; shorter in tests of a stalling identity provider. */
    private final Duration fetchTimeout;

    private volatile KeySet fromFile = KeySet.EMPTY;
    private volatile KeySet fromUrl = KeySet.EMPTY;
    private volatile KeySet current = KeySet.EMPTY;

    // file poller state, touched by the poller thread only
    private Fingerprint loaded;
    private Fingerprint pending;
    /** What the last WARN was about: a fingerprint, or {@link #UNREADABLE}; null after a good load. */
    private Object warned;
    private static final Object UNREADABLE = new Object();
    private byte[] loadedDigest;

    private final AtomicLong lastFetchNanos = new AtomicLong(System.nanoTime() - TimeUnit.DAYS.toNanos(1));
    private volatile boolean urlFailing;

    private record Fingerprint(long mtimeNanos, long size, Object fileKey) {
    }

    private KeySource(Path file, URI url, Duration refreshInterval, boolean threads, Duration minEarlyFetchGap,
                      Duration fetchTimeout) {
        this.minEarlyFetchGap = minEarlyFetchGap;
        this.fetchTimeout = fetchTimeout;
        this.file = file;
        this.url = url;
        this.refreshInterval = refreshInterval;
        this.filePoller = threads && file != null ? daemon("push-auth-jwks-file") : null;
        this.fetcher = threads && url != null ? daemon("push-auth-jwks-url") : null;
        this.httpThreads = url == null ? null
                : Executors.newSingleThreadExecutor(r -> thread(r, "push-auth-jwks-http"));
        this.http = url == null ? null : HttpClient.newBuilder()
                .connectTimeout(fetchTimeout)
                // https -> http redirects are never followed by NORMAL: keys are not downgraded to clear text
                .followRedirects(HttpClient.Redirect.NORMAL)
                .executor(httpThreads)
                .build();
    }

    /**
     * Loads the file now (a missing or broken file at start is a configuration error: it throws
     * with a message that names no key material), fetches the URL once (a failure there only logs:
     * an identity provider's blip must not keep the server down; tokens of its keys are refused
     * until a fetch succeeds), then keeps both fresh on daemon threads.
     *
     * @throws ConfigException when {@code jwksFile} cannot be loaded at start
     */
    public static KeySource start(AuthConfig.Jwt config) {
        return start(config, MIN_EARLY_FETCH_GAP);
    }

    static KeySource start(AuthConfig.Jwt config, Duration minEarlyFetchGap) {
        return start(config, minEarlyFetchGap, FETCH_TIMEOUT);
    }

    static KeySource start(AuthConfig.Jwt config, Duration minEarlyFetchGap, Duration fetchTimeout) {
        Path file = config.jwksFile() == null ? null : Path.of(config.jwksFile());
        URI url = config.jwksUrl() == null ? null : URI.create(config.jwksUrl());
        KeySource s = new KeySource(file, url, config.refreshInterval(), true, minEarlyFetchGap, fetchTimeout);
        if (file != null) {
            String problem = s.pollFile(true);
            if (problem != null) {
                s.close();
                throw new ConfigException("auth.jwt.jwksFile: " + file + ": " + problem);
            }
            long every = config.pollInterval().toMillis();
            s.filePoller.scheduleWithFixedDelay(s::pollFileQuietly, every, every, TimeUnit.MILLISECONDS);
        }
        if (url != null) {
            s.fetchOnce();
            s.scheduleNextFetch();
        }
        return s;
    }

    /** A fixed set that never changes, for tests and embedding. */
    static KeySource fixed(KeySet keys) {
        KeySource s = new KeySource(null, null, Duration.ofDays(1), false, MIN_EARLY_FETCH_GAP, FETCH_TIMEOUT);
        s.fromFile = keys;
        s.current = keys;
        return s;
    }

    /** The keys to verify with now. */
    public KeySet current() {
        return current;
    }

    /** Called by the verifier for a {@code kid} not in {@link #current()}: fetch early, rate-limited. */
    void unknownKeySeen() {
        if (fetcher == null) {
            return;
        }
        long now = System.nanoTime();
        long last = lastFetchNanos.get();
        if (now - last >= minEarlyFetchGap.toNanos() && lastFetchNanos.compareAndSet(last, now)) {
            fetcher.execute(this::fetchOnce);
        }
    }

    private void pollFileQuietly() {
        try {
            pollFile(false);
        } catch (RuntimeException e) {
            log.warn("auth.jwt.jwksFile {}: poll failed: {}", file, e.getClass().getSimpleName());
        }
    }

    /**
     * One poll. At start ({@code initial}) the file is read at once; later a change is read once
     * it has stayed the same for one poll. Returns the problem (safe to log) when a read failed.
     */
    String pollFile(boolean initial) {
        Fingerprint now;
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            now = new Fingerprint(a.lastModifiedTime().to(TimeUnit.NANOSECONDS), a.size(), a.fileKey());
        } catch (IOException e) {
            return warnOnce(null, initial, "cannot be read (" + e.getClass().getSimpleName() + ")");
        }
        if (now.equals(loaded)) {
            pending = null;
            return null;
        }
        if (!initial && !now.equals(pending)) {
            pending = now; // changed since the last poll: wait until it stops changing
            return null;
        }
        pending = null;
        byte[] bytes;
        try {
            if (Files.size(file) > MAX_DOCUMENT_BYTES) {
                return warnOnce(now, initial, "larger than " + MAX_DOCUMENT_BYTES + " bytes");
            }
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            return warnOnce(now, initial, "cannot be read (" + e.getClass().getSimpleName() + ")");
        }
        byte[] digest = sha256(bytes);
        if (Arrays.equals(digest, loadedDigest)) {
            loaded = now; // touched, same content
            return null;
        }
        KeySet parsed;
        try {
            parsed = KeySet.parse(new String(bytes, StandardCharsets.UTF_8));
        } catch (KeySet.InvalidKeySetException e) {
            return warnOnce(now, initial, e.getMessage());
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
        loaded = now;
        loadedDigest = digest;
        warned = null;
        fromFile = parsed;
        publish();
        log.info("auth.jwt.jwksFile {}: {} {} key(s): {}", file, initial ? "loaded" : "reloaded", parsed.size(),
                parsed.describe());
        return null;
    }

    private String warnOnce(Fingerprint fp, boolean initial, String problem) {
        Object about = fp == null ? UNREADABLE : fp;
        if (!initial && !about.equals(warned)) {
            warned = about;
            log.warn("auth.jwt.jwksFile {}: {}; keeping the {} key(s) loaded before: {}", file, problem,
                    fromFile.size(), fromFile.describe());
        }
        if (fp != null) {
            loaded = fp; // do not re-read the same broken file every poll; the next change is read
        }
        return problem;
    }

    private void scheduleNextFetch() {
        Duration next = urlFailing && RETRY_INTERVAL.compareTo(refreshInterval) < 0 ? RETRY_INTERVAL : refreshInterval;
        fetcher.schedule(() -> {
            fetchOnce();
            scheduleNextFetch();
        }, next.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One fetch of the URL; on any failure the last good set stays. */
    void fetchOnce() {
        lastFetchNanos.set(System.nanoTime());
        String where = url.getScheme() + "://" + url.getAuthority() + url.getPath(); // never the query
        try {
            HttpRequest req = HttpRequest.newBuilder(url).timeout(fetchTimeout)
                    .header("Accept", "application/jwk-set+json, application/json").GET().build();
            HttpResponse<InputStream> resp = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
            // the request's timeout ends with the headers: a body that stalls would hold this thread, so
            // the start and every later fetch, for good; closing the stream at the deadline ends the read
            AtomicBoolean late = new AtomicBoolean();
            CompletableFuture<Void> deadline = CompletableFuture.runAsync(() -> {
                late.set(true);
                closeQuietly(resp.body());
            }, CompletableFuture.delayedExecutor(fetchTimeout.toMillis(), TimeUnit.MILLISECONDS));
            byte[] body;
            try (InputStream in = resp.body()) {
                body = in.readNBytes(MAX_DOCUMENT_BYTES + 1);
            } catch (IOException e) {
                if (!late.get()) {
                    throw e;
                }
                body = null;
            } finally {
                deadline.cancel(false);
            }
            if (late.get()) {
                failed(where, "no whole answer within " + fetchTimeout.toMillis() + " ms");
                return;
            }
            if (resp.statusCode() != 200) {
                failed(where, "HTTP " + resp.statusCode());
                return;
            }
            if (body.length > MAX_DOCUMENT_BYTES) {
                failed(where, "larger than " + MAX_DOCUMENT_BYTES + " bytes");
                return;
            }
            KeySet parsed = KeySet.parse(new String(body, StandardCharsets.UTF_8));
            boolean changed = !parsed.describe().equals(fromUrl.describe()) || urlFailing || fromUrl.isEmpty();
            fromUrl = parsed;
            urlFailing = false;
            publish();
            if (changed) {
                log.info("auth.jwt.jwksUrl {}: fetched {} key(s): {}", where, parsed.size(), parsed.describe());
            }
        } catch (KeySet.InvalidKeySetException e) {
            failed(where, e.getMessage());
        } catch (IOException e) {
            failed(where, e.getClass().getSimpleName());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            failed(where, e.getClass().getSimpleName());
        }
    }

    private void failed(String where, String problem) {
        if (!urlFailing) {
            log.warn("auth.jwt.jwksUrl {}: {}; keeping the {} key(s) fetched before: {}", where, problem,
                    fromUrl.size(), fromUrl.describe());
        } else {
            log.debug("auth.jwt.jwksUrl {}: still failing: {}", where, problem);
        }
        urlFailing = true;
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException e) {
            // the fetch fails on its own then
        }
    }

    private synchronized void publish() {
        current = fromFile.plus(fromUrl);
    }

    private static byte[] sha256(byte[] b) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(b);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ScheduledExecutorService daemon(String name) {
        return Executors.newSingleThreadScheduledExecutor(r -> thread(r, name));
    }

    private static Thread thread(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    @Override
    public void close() {
        if (filePoller != null) {
            filePoller.shutdownNow();
        }
        if (fetcher != null) {
            fetcher.shutdownNow();
        }
        if (httpThreads != null) {
            httpThreads.shutdownNow();
        }
    }
}
