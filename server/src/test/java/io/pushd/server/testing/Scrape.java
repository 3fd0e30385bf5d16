package io.pushd.server.testing;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reading a Prometheus scrape of {@code /metrics}. */
public final class Scrape {

    private Scrape() {
    }

    /** The sum of every sample of {@code name}, whatever its labels; 0 when there is none. */
    public static double sum(String scrape, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*})? (\\S+)$").matcher(scrape);
        double sum = 0;
        while (m.find()) {
            sum += Double.parseDouble(m.group(2));
        }
        return sum;
    }
}
