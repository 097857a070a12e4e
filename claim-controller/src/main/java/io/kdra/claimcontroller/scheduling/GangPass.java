package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.GangDomains;
import io.kdra.claimcontroller.domain.GangTransaction;
import io.kdra.claimcontroller.domain.GangTransaction.Committed;
import io.kdra.claimcontroller.domain.GangTransaction.Domain;
import io.kdra.claimcontroller.domain.GangTransaction.Refused;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.scheduling.Decided.Placement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One gang pass under the scheduling lock: every pending member that could be placed is decided in
 * one {@link GangTransaction}, each seeing what the ones before it took, one topology domain at a
 * time ({@link GangDomains}); kept only if at least {@code minCount} (less the members already
 * placed) fit, else what it took is given back before the lock is released.
 */
final class GangPass {

  /**
   * What the pass comes to ({@code outcome}), or the members' placements to write ({@code kept}).
   */
  record Result(Outcome outcome, Committed<CycleState, Placement> kept, GangRefusals refusals) {
    static Result ends(Outcome outcome) {
      return new Result(outcome, null, null);
    }
  }

  private final SchedulingCycle cycle;
  private final GangMembers members;
  private final ClusterView view;
  private final RecentWrites recent;

  GangPass(SchedulingCycle cycle, GangMembers members, DraManager dra) {
    this.cycle = cycle;
    this.members = members;
    this.view = dra.view();
    this.recent = dra.recent();
  }

  /** Under the lock: the pass for {@code pod}'s group. */
  Result decide(Pod pod, PodGroupPolicy policy, int attempt) {
    if (recent.isBinding(pod.getMetadata().getUid())) {
      // another member's attempt is writing it: looked at again soon, bound or not (its write
      // may fail, and no event would then bring it back)
      return Result.ends(new Outcome.Retry("being bound with its pod group " + policy.name()));
    }
    GangMembers.Group group = members.of(pod, policy);
    if (policy.gang() && group.all().size() < policy.minCount()) {
      return Result.ends(
          new Outcome.Unschedulable(
              GangScheduling.WAITING_FOR_MEMBERS, Map.of(), "GangIncomplete"));
    }
    int need = Math.max(0, policy.minCount() - group.placed());
    List<CycleState> ready = new ArrayList<>();
    for (Pod p : group.pending()) {
      Optional<CycleState> m = members.prepare(p, policy.claims());
      if (m.isPresent() && m.get().extended() != null && m.get().extended().served()) {
        return Result.ends(
            new Outcome.Unschedulable(
                "pod "
                    + Pods.key(p)
                    + " of pod group "
                    + policy.name()
                    + " asks for extended resources served by DRA, not supported in a gang yet",
                Map.of(),
                "GangUnsupported"));
      }
      m.ifPresent(ready::add);
    }
    if (ready.size() < need) {
      return Result.ends(
          new Outcome.Unschedulable(
              "pod group "
                  + policy.name()
                  + ": "
                  + ready.size()
                  + " members are ready to be placed, minCount needs "
                  + need
                  + " more; waiting for the others' claims",
              Map.of(),
              "GangIncomplete"));
    }
    GangRefusals refusals = new GangRefusals();
    List<Domain> domains = GangDomains.of(view.nodes(), policy.topologyKey(), group.placedOn());
    GangTransaction.Result<CycleState, Placement> result =
        GangTransaction.run(ready, need, domains, placer(attempt, refusals));
    if (result instanceof Refused<CycleState, Placement> no) {
      return Result.ends(
          new Outcome.Unschedulable(
              "pod group "
                  + policy.name()
                  + ": "
                  + no.mostPlaced()
                  + " of the "
                  + no.need()
                  + " pods minCount needs fit"
                  + (policy.topologyKey() == null
                      ? ""
                      : no.domain() == null
                          ? " (no node has the topology key " + policy.topologyKey() + ")"
                          : " in any one " + policy.topologyKey() + " domain")
                  + refusals.first(),
              Map.of(),
              "GangUnschedulable"));
    }
    return new Result(null, (Committed<CycleState, Placement>) result, refusals);
  }

  /** Places one member in a domain through the scheduling cycle, as a lone pod's attempt would. */
  private GangTransaction.Placer<CycleState, Placement> placer(int attempt, GangRefusals refusals) {
    return new GangTransaction.Placer<>() {
      @Override
      public Optional<Placement> place(CycleState m, Domain domain) {
        Filter.Within within =
            domain.key() == null
                ? null
                : new Filter.Within(
                    n -> domain.contains(n.getMetadata().getLabels()),
                    "node(s) outside the pod group's topology domain");
        // a claim the members share is allocated by the first member placed: the later
        // ones see that (assumed) allocation, go where its devices are, allocate it no more
        List<ResourceClaim> claims = m.claims().stream().map(recent::withAssumed).toList();
        Decided d = cycle.decide(m.withClaims(claims), within, attempt);
        if (d instanceof Placement p) {
          return Optional.of(p);
        }
        refusals.add(m, d);
        return Optional.empty();
      }

      @Override
      public void release(CycleState m, Placement p) {
        cycle.unreserve(m, p);
      }
    };
  }
}
