package io.pushd.protocol;

/** The {@code code}/{@code error} strings of error frames and JSON error bodies. */
public final class ErrorCodes {
    public static final String BAD_JSON = "bad_json";
    public static final String BAD_MESSAGE = "bad_message";
    public static final String INVALID_TOPIC = "invalid_topic";
    public static final String INVALID_ID = "invalid_id";
    public static final String INVALID_QUERY = "invalid_query";
    public static final String INVALID_IDEMPOTENCY_KEY = "invalid_idempotency_key";
    public static final String TOO_MANY_TOPICS = "too_many_topics";
    public static final String NOT_FOUND = "not_found";
    public static final String METHOD_NOT_ALLOWED = "method_not_allowed";
    public static final String PAYLOAD_TOO_LARGE = "payload_too_large";
    /** 417: an {@code Expect} other than {@code 100-continue}. */
    public static final String EXPECTATION_FAILED = "expectation_failed";
    public static final String UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type";
    public static final String NOT_ACCEPTING = "not_accepting";
    public static final String BAD_REQUEST = "bad_request";
    public static final String HTTP_VERSION_NOT_SUPPORTED = "http_version_not_supported";
    public static final String ORIGIN_NOT_ALLOWED = "origin_not_allowed";
    public static final String INTERNAL = "internal";
    public static final String STORAGE_FULL = "storage_full";
    /** 503: appended, but the batch's sync failed (store.fsync): the event may be stored; retry with the same key. */
    public static final String NOT_DURABLE = "not_durable";
    /** 401: mode jwt and no token. */
    public static final String MISSING_TOKEN = "missing_token";
    /** 401 (and an in-band refresh that does not verify): the token does not verify. */
    public static final String INVALID_TOKEN = "invalid_token";
    /** 403 before the upgrade, or an in-band error frame: a topic outside the token's {@code topics}. */
    public static final String TOPIC_NOT_ALLOWED = "topic_not_allowed";
    /** 403: a publish outside the token's {@code publish}, or from an address not allowed (mode none). */
    public static final String PUBLISH_NOT_ALLOWED = "publish_not_allowed";

    private ErrorCodes() {
    }
}
