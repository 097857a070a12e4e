package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.GangDomains;
import io.kdra.claimcontroller.domain.GangTransaction;
import io.kdra.claimcontroller.domain.GangTransaction.Committed;
import io.kdra.claimcontroller.domain.GangTransaction.Domain;
import io.kdra.claimcontroller.domain.GangTransaction.Refused;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.PodClaimResolver;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.k8s.PodGroups;
import io.kdra.claimcontroller.scheduling.Decided.NotPlaced;
import io.kdra.claimcontroller.scheduling.Decided.Placement;
import io.kdra.claimcontroller.scheduling.Decided.Unexplained;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * Places the pods of a PodGroup ({@code spec.schedulingGroup}, Kubernetes 1.37's Workload API) with
 * a gang policy all or nothing: when a member is attempted and at least {@code minCount} members
 * exist, every pending member is decided in one pass under the scheduling lock ({@link
 * GangTransaction}), each seeing the devices and node resources the ones before it took; the pass
 * is written only if at least {@code minCount} (less the members already placed) fit, else what it
 * took is given back before the lock is released, so a gang that cannot run holds nothing. A
 * topology constraint narrows each member's nodes to one domain at a time ({@link GangDomains}).
 * The members' writes (reservations, bindings) follow, outside the lock, each as a lone pod's
 * ({@link BindingCycle}).
 */
final class GangScheduling {

  /** Upstream's reason while fewer than minCount members exist (gangscheduling's PreEnqueue). */
  static final String WAITING_FOR_MEMBERS =
      "waiting for minCount pods from a gang to appear in scheduling queue";

  private final SchedulingCycle cycle;
  private final BindingCycle binding;
  private final TemplateClaimController templates;
  private final ClusterView view;
  private final RecentWrites recent;
  private final PodGroups groups;
  private final BooleanSupplier mayWrite;

  GangScheduling(
      SchedulingCycle cycle,
      BindingCycle binding,
      TemplateClaimController templates,
      DraManager dra,
      PodGroups groups,
      BooleanSupplier mayWrite) {
    this.cycle = cycle;
    this.binding = binding;
    this.templates = templates;
    this.view = dra.view();
    this.recent = dra.recent();
    this.groups = groups;
    this.mayWrite = mayWrite;
  }

  /**
   * The attempt's outcome for {@code pod} when it belongs to a PodGroup whose policy places its
   * pods together; empty when it is scheduled alone (no group, or the basic policy without a
   * topology constraint).
   */
  Optional<Outcome> schedule(Pod pod, int attempt) {
    Optional<String> groupName = PodGroupPolicy.groupOf(pod);
    if (groupName.isEmpty()) {
      return Optional.empty();
    }
    return schedule(pod, attempt, groups.get(pod.getMetadata().getNamespace(), groupName.get()));
  }

  /** As above, with the pod's PodGroup as read for this attempt ({@code found}). */
  Optional<Outcome> schedule(Pod pod, int attempt, Optional<PodGroupPolicy> found) {
    Optional<String> groupName = PodGroupPolicy.groupOf(pod);
    if (groupName.isEmpty()) {
      return Optional.empty();
    }
    Optional<Outcome> missing = missing(pod, found);
    if (missing.isPresent()) {
      return missing;
    }
    PodGroupPolicy policy = found.get();
    if (!policy.constrains()) {
      return Optional.empty();
    }
    Pass pass;
    // the members are counted under the lock too: another attempt's pass assumes members (they
    // look placed) and gives them back under it
    synchronized (cycle.lock()) {
      if (!mayWrite.getAsBoolean()) {
        return Optional.of(PodScheduling.FENCED);
      }
      pass = decide(pod, policy, attempt);
    }
    return Optional.of(pass.outcome() != null ? pass.outcome() : write(pod, policy, pass));
  }

  /**
   * Upstream's gangscheduling PreEnqueue for a pod whose PodGroup does not exist ({@code found}
   * empty): it waits, and kube-controller-manager makes no claim for it meanwhile. Brought back by
   * the group's creation (the PodGroup informer), and by backoff where none runs.
   */
  static Optional<Outcome> missing(Pod pod, Optional<PodGroupPolicy> found) {
    Optional<String> groupName = PodGroupPolicy.groupOf(pod);
    if (groupName.isEmpty() || found.isPresent()) {
      return Optional.empty();
    }
    return Optional.of(
        new Outcome.Unschedulable(
            "waiting for pods's pod group \""
                + groupName.get()
                + "\" to appear in scheduling queue",
            Map.of(),
            "PodGroupMissing"));
  }

  /**
   * Under the lock: what the attempt comes to ({@code outcome}), or the members' placements to
   * write ({@code kept}).
   */
  private record Pass(Outcome outcome, Committed<CycleState, Placement> kept, Refusals refusals) {
    static Pass ends(Outcome outcome) {
      return new Pass(outcome, null, null);
    }
  }

  private Pass decide(Pod pod, PodGroupPolicy policy, int attempt) {
    if (recent.isBinding(pod.getMetadata().getUid())) {
      // another member's attempt is writing it: looked at again soon, bound or not (its write
      // may fail, and no event would then bring it back)
      return Pass.ends(new Outcome.Retry("being bound with its pod group " + policy.name()));
    }
    String namespace = pod.getMetadata().getNamespace();
    String scheduler = pod.getSpec().getSchedulerName();
    List<Pod> group =
        view.pods().stream()
            .filter(p -> namespace.equals(p.getMetadata().getNamespace()))
            .filter(p -> Optional.of(policy.name()).equals(PodGroupPolicy.groupOf(p)))
            .filter(p -> Pods.isScheduledBy(p, scheduler) && !Pods.isDone(p))
            .sorted(Comparator.comparing((Pod p) -> p.getMetadata().getName()))
            .toList();
    Set<String> placedOn = new HashSet<>();
    List<Pod> pending = new ArrayList<>();
    int placed = 0;
    for (Pod p : group) {
      Optional<String> node = nodeOf(p);
      if (node.isPresent()) {
        placedOn.add(node.get());
        placed++;
      } else {
        pending.add(p);
      }
    }
    if (policy.gang() && group.size() < policy.minCount()) {
      return Pass.ends(new Outcome.Unschedulable(WAITING_FOR_MEMBERS, Map.of(), "GangIncomplete"));
    }
    int need = Math.max(0, policy.minCount() - placed);
    List<CycleState> ready = new ArrayList<>();
    for (Pod p : pending) {
      Optional<CycleState> m = prepare(p, policy.claims());
      if (m.isPresent() && m.get().extended() != null && m.get().extended().served()) {
        return Pass.ends(
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
      return Pass.ends(
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
    Refusals refusals = new Refusals();
    List<Domain> domains = GangDomains.of(view.nodes(), policy.topologyKey(), placedOn);
    GangTransaction.Result<CycleState, Placement> result =
        GangTransaction.run(
            ready,
            need,
            domains,
            new GangTransaction.Placer<>() {
              @Override
              public Optional<Placement> place(CycleState m, Domain domain) {
                Predicate<Node> within =
                    domain.key() == null ? null : n -> domain.contains(n.getMetadata().getLabels());
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
            });
    if (result instanceof Refused<CycleState, Placement> no) {
      return Pass.ends(
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
    return new Pass(null, (Committed<CycleState, Placement>) result, refusals);
  }

  /** Outside the lock: writes the members' placements, each as a lone pod's. */
  private Outcome write(Pod trigger, PodGroupPolicy policy, Pass pass) {
    Committed<CycleState, Placement> kept = pass.kept();
    Refusals refusals = pass.refusals();
    Outcome triggers = null;
    List<Map.Entry<CycleState, Placement>> writes = new ArrayList<>(kept.placed().entrySet());
    for (int i = 0; i < writes.size(); i++) {
      CycleState m = writes.get(i).getKey();
      Outcome o;
      try {
        o = binding.run(m, writes.get(i).getValue());
      } catch (RuntimeException e) {
        // the members after this one were assumed and never written: give them back
        synchronized (cycle.lock()) {
          for (Map.Entry<CycleState, Placement> rest : writes.subList(i + 1, writes.size())) {
            cycle.unreserve(rest.getKey(), rest.getValue());
          }
        }
        throw e;
      }
      if (m.uid().equals(trigger.getMetadata().getUid())) {
        triggers = o;
      }
    }
    if (triggers != null) {
      return triggers;
    }
    return new Outcome.Unschedulable(
        "pod group "
            + policy.name()
            + " placed "
            + writes.size()
            + " members in "
            + kept.domain()
            + "; this pod did not fit"
            + refusals.of(trigger.getMetadata().getUid()),
        Map.of(),
        "GangMemberUnschedulable");
  }

  /** The first reason a member did not fit, and each member's, for the messages. */
  private static final class Refusals {
    private final Map<String, String> byUid = new TreeMap<>();
    private String first;

    void add(CycleState m, Decided d) {
      String why;
      if (d instanceof NotPlaced np && np.outcome() instanceof Outcome.Unschedulable u) {
        why = u.message();
      } else if (d instanceof NotPlaced np) {
        why = np.outcome().toString();
      } else {
        // the diagnosis of where no node took the claims is left out: it would run under the lock
        Unexplained u = (Unexplained) d;
        u.spans().end();
        why = "its claims fit on none of the " + u.nodes().feasible().size() + " nodes left";
      }
      byUid.putIfAbsent(m.uid(), why);
      if (first == null) {
        first = "; " + Pods.key(m.pod()) + ": " + why;
      }
    }

    String first() {
      return first == null ? "" : first;
    }

    String of(String uid) {
      String why = byUid.get(uid);
      return why == null ? "" : ": " + why;
    }
  }

  /** A member's node: bound, or being bound by this process. */
  private Optional<String> nodeOf(Pod p) {
    if (Pods.isBound(p)) {
      return Optional.of(p.getSpec().getNodeName());
    }
    return recent.bindingNode(p.getMetadata().getUid());
  }

  /**
   * The member with its claims, when it could be placed now as a lone pod could: no scheduling
   * gates, every claim there and not being deleted, no unsupported volume.
   */
  private Optional<CycleState> prepare(Pod p, PodGroupClaims group) {
    if (p.getSpec().getSchedulingGates() != null && !p.getSpec().getSchedulingGates().isEmpty()) {
      return Optional.empty();
    }
    PodClaimResolver.Resolution r = templates.resolve(p, group);
    if (!r.complete()
        || !PreEnqueue.missing(r).isEmpty()
        || !PreEnqueue.beingDeleted(r).isEmpty()
        || PreFilter.refusal(p).isPresent()) {
      return Optional.empty();
    }
    return Optional.of(PreFilter.state(p, r, group, view));
  }

  /**
   * The filter's result with the nodes outside {@code domain} moved to the rejected ones, with a
   * reason of their own.
   */
  static NodeFilter.Result within(NodeFilter.Result nodes, Predicate<Node> domain) {
    List<Node> feasible = new ArrayList<>();
    Map<String, String> rejected = new TreeMap<>(nodes.rejected());
    for (Node n : nodes.feasible()) {
      if (domain.test(n)) {
        feasible.add(n);
      } else {
        rejected.put(n.getMetadata().getName(), "node(s) outside the pod group's topology domain");
      }
    }
    return new NodeFilter.Result(feasible, rejected);
  }
}
