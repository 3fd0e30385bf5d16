package io.pushd.server.pipeline;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.pushd.protocol.ErrorCodes;

/**
 * {@code /v1/client.js}, {@code /v1/client.d.ts} and {@code /demo} ({@code server.demo}): the
 * {@link WebAssets} from memory, GET and HEAD, with a strong {@code ETag} and {@code 304} for a
 * matching {@code If-None-Match}.
 */
final class StaticRoutes {

    static final String CLIENT_JS = "/v1/client.js";
    static final String CLIENT_TYPES = "/v1/client.d.ts";
    static final String DEMO = "/demo";
    static final String DEMO_SLASH = "/demo/";

    /**
     * The client's URL carries no version, so a browser must notice a server upgrade: 5 minutes
     * spares a page's repeat loads (and every module import of it) the round trip, and bounds how
     * long a new server can see an old client; past that a revalidation is a bodiless 304.
     */
    static final String CLIENT_CACHE_CONTROL = "public, max-age=300";
    /** The demo page is small and follows the server's version: always revalidated. */
    static final String DEMO_CACHE_CONTROL = "no-cache";

    private final WebAssets assets = WebAssets.get();
    private final ServerContext server;

    StaticRoutes(ServerContext server) {
        this.server = server;
    }

    void handle(ChannelHandlerContext ctx, FullHttpRequest req, String path) {
        switch (path) {
            case CLIENT_JS -> serve(ctx, req, assets.clientJs, CLIENT_CACHE_CONTROL, null);
            case CLIENT_TYPES -> serve(ctx, req, assets.clientTypes, CLIENT_CACHE_CONTROL, null);
            default -> {
                if (server.config().server().demo()) {
                    serve(ctx, req, assets.demoPage, DEMO_CACHE_CONTROL, assets.demoPolicy);
                } else {
                    HttpResponses.reply(ctx, req, HttpResponses.error(HttpResponseStatus.NOT_FOUND,
                            ErrorCodes.NOT_FOUND, "no resource at " + path + " (the demo is off: server.demo)"));
                }
            }
        }
    }

    private static void serve(ChannelHandlerContext ctx, FullHttpRequest req, WebAssets.Asset asset,
                              String cacheControl, String policy) {
        HttpResponses.onlyGet(ctx, req, () -> {
            FullHttpResponse res;
            if (matches(req.headers().get(HttpHeaderNames.IF_NONE_MATCH), asset.etag())) {
                res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_MODIFIED);
            } else {
                // wraps the shared array: no copy, and nothing to release
                res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                        Unpooled.wrappedBuffer(asset.bytes()));
                res.headers().set(HttpHeaderNames.CONTENT_TYPE, asset.contentType());
                HttpUtil.setContentLength(res, asset.bytes().length);
            }
            HttpHeaders h = res.headers();
            h.set(HttpHeaderNames.ETAG, asset.etag());
            h.set(HttpHeaderNames.CACHE_CONTROL, cacheControl);
            h.set("x-content-type-options", "nosniff");
            if (policy != null) {
                h.set("content-security-policy", policy);
                h.set("referrer-policy", "no-referrer");
            }
            HttpResponses.reply(ctx, req, res);
        });
    }

    /**
     * RFC 9110 13.1.2: {@code *} or a list of tags, compared weakly (a {@code W/} prefix is
     * ignored), so a tag a proxy weakened still matches.
     */
    static boolean matches(String ifNoneMatch, String etag) {
        if (ifNoneMatch == null) {
            return false;
        }
        for (String candidate : ifNoneMatch.split(",")) {
            String t = candidate.trim();
            if (t.equals("*")) {
                return true;
            }
            if (t.startsWith("W/")) {
                t = t.substring(2);
            }
            if (t.equals(etag)) {
                return true;
            }
        }
        return false;
    }
}
