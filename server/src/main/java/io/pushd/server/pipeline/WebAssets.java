package io.pushd.server.pipeline;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The browser files the daemon serves: the JavaScript client and its types, and the demo page,
 * exactly as they are in {@code clients/js} (the build copies them into the jar's {@code web/}).
 * Read once, when the server starts, so a request never touches the disk and a jar without them
 * fails at start-up rather than at the first request.
 */
final class WebAssets {

    /**
     * One file and its validators. {@code etag} is strong (a hash of the bytes): the same bytes
     * always get the same tag, on every node of a cluster and across restarts.
     */
    record Asset(byte[] bytes, String contentType, String etag) {
    }

    private static final class Holder {
        static final WebAssets INSTANCE = new WebAssets();
    }

    final Asset clientJs;
    final Asset clientTypes;
    final Asset demoPage;
    /** The demo page's Content-Security-Policy: self, plus the hashes of its own inline script and style. */
    final String demoPolicy;

    private WebAssets() {
        clientJs = asset("web/push-client.js", "text/javascript; charset=utf-8");
        clientTypes = asset("web/push-client.d.ts", "text/plain; charset=utf-8");
        demoPage = asset("web/demo/index.html", "text/html; charset=utf-8");
        demoPolicy = policyFor(new String(demoPage.bytes(), StandardCharsets.UTF_8));
    }

    /** The files, read from the class path on the first call. */
    static WebAssets get() {
        return Holder.INSTANCE;
    }

    private static Asset asset(String resource, String contentType) {
        byte[] bytes;
        try (InputStream in = WebAssets.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the server jar (the build copies it "
                        + "from clients/js)");
            }
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(resource, e);
        }
        String hash = Base64.getUrlEncoder().withoutPadding().encodeToString(sha256(bytes));
        return new Asset(bytes, contentType, '"' + hash.substring(0, 27) + '"');
    }

    private static final Pattern INLINE_SCRIPT = Pattern.compile("<script(?:\\s[^>]*)?>(.*?)</script>",
            Pattern.DOTALL | Pattern.CASE_INSENSITIVE);
    private static final Pattern INLINE_STYLE = Pattern.compile("<style(?:\\s[^>]*)?>(.*?)</style>",
            Pattern.DOTALL | Pattern.CASE_INSENSITIVE);

    /**
     * Nothing but this server: the page has no external asset. Its inline module and style are
     * allowed by hash (computed from the page itself, so an edit of the page cannot break it),
     * never by {@code 'unsafe-inline'}: data anyone may publish is shown on it.
     */
    static String policyFor(String html) {
        return "default-src 'none'; script-src 'self'" + hashes(INLINE_SCRIPT, html)
                + "; style-src 'self'" + hashes(INLINE_STYLE, html)
                + "; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    }

    private static String hashes(Pattern inline, String html) {
        List<String> out = new ArrayList<>();
        Matcher m = inline.matcher(html);
        while (m.find()) {
            if (!m.group(1).isEmpty()) {
                out.add(" 'sha256-" + Base64.getEncoder().encodeToString(
                        sha256(m.group(1).getBytes(StandardCharsets.UTF_8))) + "'");
            }
        }
        return String.join("", out);
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every JVM has SHA-256
        }
    }
}
