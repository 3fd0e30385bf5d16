package io.pushd.server.topic;

/**
 * Hands out the next sequence number of a topic. Called only from the publisher's writer thread.
 * The local implementation counts in memory from the store's recovered heads; a shared one (for
 * several nodes behind one balancer) can replace it without touching the pipeline.
 */
public interface Sequencer {

    long next(String topic);

    /**
     * The append of {@code seq}, the last number {@link #next} gave {@code topic}, failed: hand it
     * out again, so a refused publish burns no number.
     */
    void release(String topic, long seq);
}
