package io.pushd.loadtest.report;

import java.util.Locale;

/** Inline SVG for {@link BarChart}s: bars per bin, a time axis in seconds, labelled markers. */
final class Svg {

    private static final int WIDTH = 1000;
    private static final int HEIGHT = 260;
    private static final int LEFT = 50;
    private static final int RIGHT = 20;
    private static final int TOP = 30;
    private static final int BOTTOM = 40;

    private Svg() {
    }

    static String barChart(BarChart c) {
        int[] counts = c.counts();
        double spanMs = Math.max(1, counts.length) * (double) c.binMillis();
        for (BarChart.Marker m : c.markers()) {
            spanMs = Math.max(spanMs, m.atMillis() + c.binMillis());
        }
        int max = 1;
        for (int n : counts) {
            max = Math.max(max, n);
        }
        double plotW = WIDTH - LEFT - RIGHT;
        double plotH = HEIGHT - TOP - BOTTOM;
        double xPerMs = plotW / spanMs;
        StringBuilder s = new StringBuilder(8_192);
        s.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                        + "font-family=\"sans-serif\" font-size=\"11\" role=\"img\">%n",
                WIDTH, HEIGHT, WIDTH, HEIGHT));
        s.append("<title>").append(ReportWriter.Html.esc(c.title())).append("</title>\n");
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"18\" font-size=\"13\" font-weight=\"600\">%s</text>%n",
                LEFT, ReportWriter.Html.esc(c.title())));
        yAxis(s, max, plotH, c.yLabel());
        bars(s, c, max, plotH, xPerMs);
        xAxis(s, c.binMillis(), spanMs, plotH, plotW, xPerMs);
        markers(s, c.markers(), plotH, xPerMs);
        s.append("</svg>");
        return s.toString();
    }

    /** Grid lines and labels at 0, max/2 and max. */
    private static void yAxis(StringBuilder s, int max, double plotH, String label) {
        for (int i = 0; i <= 2; i++) {
            int v = max * i / 2;
            double y = TOP + plotH - plotH * v / max;
            s.append(String.format(Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
                            + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d</text>%n",
                    LEFT, y, WIDTH - RIGHT, y, LEFT - 6, y + 4, v));
        }
        s.append(String.format(Locale.ROOT,
                "<text x=\"12\" y=\"%.1f\" transform=\"rotate(-90 12 %.1f)\" text-anchor=\"middle\">%s</text>%n",
                TOP + plotH / 2, TOP + plotH / 2, ReportWriter.Html.esc(label)));
    }

    private static void bars(StringBuilder s, BarChart c, int max, double plotH, double xPerMs) {
        int[] counts = c.counts();
        double barW = Math.max(1, c.binMillis() * xPerMs - 1);
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] == 0) {
                continue;
            }
            double h = plotH * counts[i] / max;
            s.append(String.format(Locale.ROOT,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#1e88e5\"><title>%.1f-%.1f s: %d</title></rect>%n",
                    LEFT + i * c.binMillis() * xPerMs, TOP + plotH - h, barW, h,
                    i * c.binMillis() / 1000.0, (i + 1) * c.binMillis() / 1000.0, counts[i]));
        }
    }

    /** The time axis, a tick per second (or coarser for long spans). */
    private static void xAxis(StringBuilder s, int binMillis, double spanMs, double plotH, double plotW,
                              double xPerMs) {
        double axisY = TOP + plotH;
        s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#444\"/>%n",
                LEFT, axisY, WIDTH - RIGHT, axisY));
        int stepS = Math.max(1, (int) Math.ceil(spanMs / 1000.0 / 25));
        for (int sec = 0; sec * 1000.0 <= spanMs; sec += stepS) {
            double x = LEFT + sec * 1000.0 * xPerMs;
            s.append(String.format(Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>"
                            + "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>%n",
                    x, axisY, x, axisY + 4, x, axisY + 16, sec));
        }
        s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">seconds after the trigger"
                + " (bins of %d ms)</text>%n", LEFT + plotW / 2, HEIGHT - 6, binMillis));
    }

    private static void markers(StringBuilder s, java.util.List<BarChart.Marker> markers, double plotH,
                                double xPerMs) {
        double axisY = TOP + plotH;
        int row = 0;
        for (BarChart.Marker m : markers) {
            double x = LEFT + m.atMillis() * xPerMs;
            s.append(String.format(Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e53935\" stroke-dasharray=\"4 3\"/>"
                            + "<text x=\"%.1f\" y=\"%d\" fill=\"#e53935\">%s</text>%n",
                    x, TOP, x, axisY, x + 3, TOP + 10 + 12 * (row++ % 3), ReportWriter.Html.esc(m.label())));
        }
    }
}
