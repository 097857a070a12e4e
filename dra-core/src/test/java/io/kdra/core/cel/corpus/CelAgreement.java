package io.kdra.core.cel.corpus;

import io.kdra.core.cel.CelDevice;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Compares our outcome of each case with upstream's (live from the oracle, or from the golden
 * file): the outcome must be the same, and with {@code strictCost} the estimated cost and the
 * rejection for cost too, unless a {@link CelKnownDivergences} entry matches. Actual costs are
 * compared and reported, not required: the outcome already covers where the runtime limit trips.
 */
public final class CelAgreement {

  /**
   * @param mismatches one entry per disagreement (expression, device, both outcomes)
   * @param report the disagreements, one per line: expression, device, upstream, kdra (tabs)
   * @param knownReport the known divergences, each line starting with the divergence's name
   * @param summary one line of counts
   * @param actualCostDiffs up to 20 expressions whose actual cost differs
   */
  public record Result(
      List<String> mismatches,
      String report,
      String knownReport,
      String summary,
      List<String> actualCostDiffs) {}

  private CelAgreement() {}

  public static Result compare(
      String corpus,
      List<CelCorpus.Case> cases,
      List<CelOutcome> upstream,
      DeviceSelectorEnvironment env,
      boolean strictCost) {
    if (cases.size() != upstream.size()) {
      throw new IllegalArgumentException(
          cases.size() + " cases, " + upstream.size() + " outcomes of upstream");
    }
    List<CelDevice> devices =
        CelDevices.all().stream().map(d -> CelDevice.of(CelDevices.DRIVER, d)).toList();
    Map<String, Object> compiled = new HashMap<>();
    List<String> mismatches = new ArrayList<>();
    StringBuilder report = new StringBuilder();
    StringBuilder knownReport = new StringBuilder();
    Map<String, Integer> knownByName = new TreeMap<>();
    Map<String, Integer> classes = new TreeMap<>();
    List<String> actualDiffs = new ArrayList<>();
    int costRejectionMismatches = 0;
    int costEqual = 0;
    int bothCompiled = 0;
    int actualCompared = 0;
    int actualEqual = 0;
    for (int i = 0; i < cases.size(); i++) {
      CelCorpus.Case c = cases.get(i);
      CelOutcome theirs = upstream.get(i);
      CelOutcome ours = CelOutcome.ours(env, c.expression(), devices.get(c.device()), compiled);
      classes.merge(theirs.outcome(), 1, Integer::sum);
      if (theirs.cost() != null && ours.cost() != null) {
        bothCompiled++;
        if (theirs.cost().equals(ours.cost())) {
          costEqual++;
        }
      }
      if (theirs.actual() != null
          && ours.actual() != null
          && !"runtime_error".equals(theirs.outcome())) {
        actualCompared++;
        if (theirs.actual().equals(ours.actual())) {
          actualEqual++;
        } else if (actualDiffs.size() < 20) {
          actualDiffs.add(
              c.expression() + ": upstream " + theirs.actual() + ", kdra " + ours.actual());
        }
      }
      if (theirs.costRejected() != ours.costRejected()) {
        costRejectionMismatches++;
      }
      boolean agree =
          theirs.outcome().equals(ours.outcome())
              && (!strictCost
                  || theirs.costRejected() == ours.costRejected()
                      && Objects.equals(theirs.cost(), ours.cost()));
      if (agree) {
        continue;
      }
      String line =
          String.join(
              "\t",
              c.expression(),
              c.deviceName(),
              theirs.summary().replace('\n', ' '),
              ours.summary().replace('\n', ' '));
      Optional<CelKnownDivergences.Divergence> known =
          CelKnownDivergences.find(c.expression(), theirs.summary(), ours.summary());
      if (known.isPresent()) {
        knownByName.merge(known.get().name(), 1, Integer::sum);
        knownReport.append(known.get().name()).append('\t').append(line).append('\n');
        continue;
      }
      report.append(line).append('\n');
      mismatches.add(
          c.expression()
              + "  [device "
              + c.deviceName()
              + "]\n    upstream: "
              + theirs.summary()
              + "\n    kdra:     "
              + ours.summary());
    }
    String summary =
        "CEL differential "
            + corpus
            + ": "
            + cases.size()
            + " cases "
            + classes
            + ", "
            + mismatches.size()
            + " disagreements, "
            + knownByName.values().stream().mapToInt(Integer::intValue).sum()
            + " known divergences "
            + knownByName
            + "; estimated cost equal on "
            + costEqual
            + " of "
            + bothCompiled
            + " compiled, rejected for cost by one side only: "
            + costRejectionMismatches
            + "; actual cost equal on "
            + actualEqual
            + " of "
            + actualCompared
            + " evaluated"
            + (strictCost ? "" : " (costs not asserted: -Dkdra.cel.strictCost=false)");
    return new Result(mismatches, report.toString(), knownReport.toString(), summary, actualDiffs);
  }
}
