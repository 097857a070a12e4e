package io.kdra.core.cel.corpus;

import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where kdra's selector environment knowingly differs from upstream's, each with its reason. A
 * disagreement is known when the expression and both outcomes (as {@code Outcome.summary()} prints
 * them) match a divergence; every other disagreement fails the differential test. Keep these
 * narrow: each one hides real differences in the expressions it matches.
 */
public final class CelKnownDivergences {

  /** A named divergence: patterns (found anywhere) on the expression and the two outcomes. */
  public record Divergence(
      String name,
      Pattern expression,
      Pattern upstream,
      Pattern ours,
      String reason,
      String sample) {
    public boolean matches(String expr, String theirs, String mine) {
      return expression.matcher(expr).find()
          && upstream.matcher(theirs).find()
          && ours.matcher(mine).find();
    }
  }

  /**
   * @param sample an expression that shows the divergence (checked to still diverge)
   */
  private static Divergence of(
      String name, String expression, String upstream, String ours, String reason, String sample) {
    return new Divergence(
        name,
        Pattern.compile(expression),
        Pattern.compile(upstream),
        Pattern.compile(ours),
        reason,
        sample);
  }

  public static final List<Divergence> ALL =
      List.of(
          of(
              "upstream-internal-error",
              "",
              "internal error: interface conversion",
              "",
              "cel-go's cost tracker for distinct() panics when the list failed to evaluate (an "
                  + "internal error no || absorbs); cel-java reports no failed node to an evaluation "
                  + "listener, so the failure is absorbed here as CEL says",
              "sets.contains([device.attributes[\"gpu.kdra.io\"].nosuch].distinct(), [1]) || true"),
          of(
              "timestamp-offset-text",
              // a timestamp literal with an offset, turned into text
              "^(?=.*timestamp\\(\"[^\"]*[+-]\\d\\d:\\d\\d\"\\))(?=.*(string|format)\\()",
              "",
              "",
              "a Go timestamp keeps the offset it was parsed with, and string() and format() print "
                  + "it (its getters read UTC, as ours do); cel-java's timestamps are instants "
                  + "(java.time.Instant), printed in UTC. Keeping the offset would take a timestamp "
                  + "type of our own through every standard overload, for selectors over device "
                  + "attributes, which hold no timestamps",
              "string(timestamp(\"2024-01-01T10:00:00+05:30\")) == \"2024-01-01T10:00:00+05:30\""));

  private CelKnownDivergences() {}

  /** The known divergence the disagreement matches, if any. */
  public static Optional<Divergence> find(String expression, String upstream, String ours) {
    return ALL.stream().filter(d -> d.matches(expression, upstream, ours)).findFirst();
  }
}
