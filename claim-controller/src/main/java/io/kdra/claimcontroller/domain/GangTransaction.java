package io.kdra.claimcontroller.domain;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * All or nothing for a gang: its pending members are placed one after the other in one pass, each
 * seeing what the ones before it took, and the pass is kept only if at least {@code need} of them
 * were placed; otherwise every placement it made is released before it returns, so nothing is held
 * by a gang that cannot run. With a topology constraint each domain is one such pass, in the order
 * given, until one holds the gang. Pure: the {@link Placer} decides and takes (and gives back) what
 * one member needs.
 *
 * <p>Upstream (kube-scheduler 1.37, {@code gangscheduling} and {@code topologyaware} plugins)
 * schedules members one by one and holds each at Permit, for up to 5 minutes, until minCount are
 * assumed; here no hold outlives the pass.
 */
public final class GangTransaction {

  private GangTransaction() {}

  /**
   * Where the members may go: the nodes whose label {@code key} has {@code value}, or anywhere
   * ({@link #ANYWHERE}).
   */
  public record Domain(String key, String value) {

    public static final Domain ANYWHERE = new Domain(null, null);

    /** Whether a node with these labels lies in the domain. */
    public boolean contains(Map<String, String> nodeLabels) {
      return key == null || (nodeLabels != null && value.equals(nodeLabels.get(key)));
    }

    @Override
    public String toString() {
      return key == null ? "anywhere" : key + "=" + value;
    }
  }

  /**
   * Places one member of the gang within a domain. What {@link #place} returns stays taken (seen by
   * the next member's placement) until {@link #release}.
   */
  public interface Placer<M, P> {
    Optional<P> place(M member, Domain domain);

    void release(M member, P placement);
  }

  /** What the pass came to. */
  public sealed interface Result<M, P> {}

  /** Kept: these members' placements, in order, all within {@code domain}. */
  public record Committed<M, P>(Map<M, P> placed, Domain domain) implements Result<M, P> {}

  /**
   * Released: no domain took {@code need} members; {@code mostPlaced} were placed at best, in
   * {@code domain} (null when there was no domain to try).
   */
  public record Refused<M, P>(int need, int mostPlaced, Domain domain) implements Result<M, P> {}

  /**
   * Runs the pass: keeps the first domain where at least {@code need} (and at least one) of {@code
   * pending} were placed; members that did not fit there are left pending.
   */
  public static <M, P> Result<M, P> run(
      List<M> pending, int need, List<Domain> domains, Placer<M, P> placer) {
    int wanted = Math.max(need, 1);
    int most = -1;
    Domain best = null;
    for (Domain domain : domains) {
      Map<M, P> placed = new LinkedHashMap<>();
      int left = pending.size();
      for (M member : pending) {
        if (placed.size() + left < wanted) {
          break; // upstream's PlacementFeasible: the rest cannot make up the quorum
        }
        left--;
        placer.place(member, domain).ifPresent(p -> placed.put(member, p));
      }
      if (placed.size() >= wanted) {
        return new Committed<>(placed, domain);
      }
      if (placed.size() > most) {
        most = placed.size();
        best = domain;
      }
      List<Map.Entry<M, P>> taken = new ArrayList<>(placed.entrySet());
      for (int i = taken.size() - 1; i >= 0; i--) {
        placer.release(taken.get(i).getKey(), taken.get(i).getValue());
      }
    }
    return new Refused<>(wanted, Math.max(most, 0), best);
  }
}
