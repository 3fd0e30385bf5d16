package io.pushd.server.cluster;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;

/**
 * The Redis names of one topic. Every key and the channel carry the hash tag {@code {topic}}, so a
 * topic lives on one shard of a Redis Cluster and its script touches one slot (topic names are
 * {@code [A-Za-z0-9_.:-]}: never a brace).
 */
final class RedisKeys {

    private static final String PREFIX = "push:{";
    static final String CHANNEL_PATTERN = "push:{*}:ev";
    private static final SecureRandom RANDOM = new SecureRandom();

    private RedisKeys() {
    }

    /** Hash: {@code e} = the topic's epoch, {@code s} = its last sequence. */
    static byte[] meta(String topic) {
        return bytes(PREFIX + topic + "}:m");
    }

    /** Stream of the kept events, entry ID {@code <seq>-0}, fields {@code t} (append ms) and {@code d} (data). */
    static byte[] stream(String topic) {
        return bytes(PREFIX + topic + "}:s");
    }

    /** Hash {@code e}, {@code s}: the answer given to an idempotency key, expiring after the dedupe window. */
    static byte[] result(String topic, String key) {
        return bytes(PREFIX + topic + "}:k:" + key);
    }

    /** Pub/sub channel of the topic's events: {@code <epoch> <seq> <ts> <data>}. */
    static byte[] channel(String topic) {
        return bytes(PREFIX + topic + "}:ev");
    }

    /** The topic of a channel name, or null for a channel that is not ours. */
    static String topicOfChannel(byte[] channel) {
        String c = new String(channel, StandardCharsets.UTF_8);
        return c.startsWith(PREFIX) && c.endsWith("}:ev") ? c.substring(PREFIX.length(), c.length() - 4) : null;
    }

    /** A fresh epoch: random, so two histories of a topic never share one (1-32 of [0-9a-z]). */
    static String newEpoch() {
        return Long.toString(RANDOM.nextLong() & Long.MAX_VALUE, 36);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String text(Object redisValue) {
        return redisValue == null ? null : new String((byte[]) redisValue, StandardCharsets.UTF_8);
    }
}
