package io.pushd.loadtest.restart;

import java.util.List;
import java.util.Locale;

/**
 * How the server spread its retry hints ({@code retryMs} of the 1012/1013 closes) after one
 * restart: the share of the hints in each 1-second slice {@code [k, k+1) s}.
 *
 * @param count     hints seen
 * @param maxMs     the largest hint
 * @param perSecond hints per 1-second slice, from 0 to the slice of the largest
 */
record HintSpread(int count, long maxMs, int[] perSecond) {

    /** @param hints the hints in milliseconds (none negative) */
    static HintSpread of(List<Long> hints) {
        long max = hints.stream().mapToLong(Long::longValue).max().orElse(0);
        int[] perSecond = new int[hints.isEmpty() ? 0 : (int) (max / 1000) + 1];
        hints.forEach(h -> perSecond[(int) (h / 1000)]++);
        return new HintSpread(hints.size(), max, perSecond);
    }

    /** "[0,1) s: 10.0 %, [1,2) s: 90.0 %". */
    String slices() {
        StringBuilder s = new StringBuilder();
        for (int k = 0; k < perSecond.length; k++) {
            s.append(String.format(Locale.ROOT, "%s[%d,%d) s: %.1f %%", k == 0 ? "" : ", ", k, k + 1,
                    100.0 * perSecond[k] / count));
        }
        return s.toString();
    }
}
