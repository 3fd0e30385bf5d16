package io.pushd.server.topic;

import java.util.HashMap;
import java.util.Map;

/** Sequences for one node: continues from the heads the store recovered. Writer thread only. */
public final class LocalSequencer implements Sequencer {

    private final Map<String, Long> heads;

    public LocalSequencer(Map<String, Long> recoveredHeads) {
        this.heads = new HashMap<>(recoveredHeads);
    }

    @Override
    public long next(String topic) {
        return heads.merge(topic, 1L, Long::sum);
    }

    @Override
    public void release(String topic, long seq) {
        heads.computeIfPresent(topic, (t, head) -> head == seq ? seq - 1 : head);
    }
}
