package io.pushd.loadtest.report;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.HdrHistogram.Histogram;

/** Percentiles of one HdrHistogram, in milliseconds. */
public record LatencySummary(String name, long count, double p50Ms, double p90Ms, double p99Ms, double p999Ms,
                             double maxMs) {

    /** @param unitsPerMs 1000 for a histogram of microseconds, 1 for milliseconds */
    public static LatencySummary of(String name, Histogram h, double unitsPerMs) {
        if (h.getTotalCount() == 0) {
            return new LatencySummary(name, 0, 0, 0, 0, 0, 0);
        }
        return new LatencySummary(name, h.getTotalCount(),
                h.getValueAtPercentile(50) / unitsPerMs, h.getValueAtPercentile(90) / unitsPerMs,
                h.getValueAtPercentile(99) / unitsPerMs, h.getValueAtPercentile(99.9) / unitsPerMs,
                h.getMaxValue() / unitsPerMs);
    }

    /** Writes count, p50, p90, p99, p999 and max (ms) into {@code o}. */
    public ObjectNode toJson(ObjectNode o) {
        return o.put("count", count).put("p50", p50Ms).put("p90", p90Ms).put("p99", p99Ms).put("p999", p999Ms)
                .put("max", maxMs);
    }
}
