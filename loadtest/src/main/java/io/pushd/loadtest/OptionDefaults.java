package io.pushd.loadtest;

import java.util.Map;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A command's own defaults for options of the shared mixins (e.g. {@code --topics}), by longest
 * option name; every other option keeps the default it declares. Subclass with a no-argument
 * constructor for {@code @Command(defaultValueProvider = ...)}.
 */
public abstract class OptionDefaults implements IDefaultValueProvider {

    private final Map<String, String> defaults;

    protected OptionDefaults(Map<String, String> defaults) {
        this.defaults = Map.copyOf(defaults);
    }

    @Override
    public String defaultValue(ArgSpec arg) {
        return arg instanceof OptionSpec o ? defaults.get(o.longestName()) : null;
    }
}
