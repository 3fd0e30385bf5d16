package io.pushd.loadtest.report;

import java.util.List;

/**
 * Counts per time bin, e.g. reconnects per 100 ms after a restart was triggered.
 *
 * @param binMillis width of one bin; bin 0 starts at the reference moment (x = 0)
 * @param counts    one value per bin
 * @param markers   vertical lines, e.g. "server ready" at x ms
 */
public record BarChart(String title, String yLabel, int binMillis, int[] counts, List<Marker> markers) {

    public BarChart {
        counts = counts.clone();
        markers = List.copyOf(markers);
    }

    /** A labelled moment on the x axis. */
    public record Marker(String label, double atMillis) {
    }
}
