package io.pushd.protocol;

/** Topic names: 1-200 characters of {@code [A-Za-z0-9_.:-]}. */
public final class TopicName {

    public static final int MAX_LENGTH = 200;

    private TopicName() {
    }

    public static boolean isValid(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_LENGTH) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '_' || c == '.' || c == ':' || c == '-';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** Returns the name, or throws {@link IllegalArgumentException} saying what was expected. */
    public static String require(String name) {
        if (!isValid(name)) {
            String shown = name == null ? "null" : name.length() > 40 ? name.substring(0, 40) + "..." : name;
            throw new IllegalArgumentException(
                    "invalid topic '" + shown + "' (expected: 1-200 characters of [A-Za-z0-9_.:-])");
        }
        return name;
    }
}
