package io.pushd.loadtest.report;

/** One pass/fail line of a report; {@code detail} says what was measured against what. */
public record Check(String name, boolean passed, String detail) {
}
