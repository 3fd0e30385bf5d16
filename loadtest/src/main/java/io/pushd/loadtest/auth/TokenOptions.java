package io.pushd.loadtest.auth;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code --token}: a picocli mixin for the scenarios that start their own server. */
public final class TokenOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--token", paramLabel = "MODE", defaultValue = "none",
            description = "none, hs256 or rs256: the run generates a key, starts the server with auth.mode=jwt and "
                    + "that key, and gives every client (one sub each) and the publisher a signed token. "
                    + "Not with --url.")
    TokenMode token;

    public TokenMode mode() {
        return token;
    }

    /**
     * A usage error with {@code --url}: an external server does not know the key this run
     * generates, and taking its key material on the command line is not worth the risk of it
     * ending up in a shell history or a report.
     */
    public void validate() {
        if (token != TokenMode.none && spec.commandLine().getParseResult().hasMatchedOption("--url")) {
            throw new ParameterException(spec.commandLine(), "--token " + token + " cannot be combined with --url: "
                    + "the key is generated per run and only a server this run starts is given it");
        }
    }
}
