package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.kdra.claimcontroller.domain.ClaimLookup;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.PodClaimResolver;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.domain.VictimSearch;
import io.kdra.claimcontroller.k8s.PodGroups;
import io.kdra.claimcontroller.k8s.PreemptionWriter;
import io.kdra.core.alloc.Allocator;
import io.kdra.events.EventRecorder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import java.util.stream.Collectors;

/**
 * kube-scheduler's PostFilter for this scheduler (DefaultPreemption): after an attempt found no
 * node for a pod, finds with {@link VictimSearch} the node and the fewest pods of lower priority
 * whose eviction makes it fit, simulated by {@link PreemptionFits}; then promises the pod what the
 * simulation freed ({@link Nominations}), sets its {@code nominatedNodeName}, and evicts the
 * victims as kube-scheduler does (condition, then delete with their grace period; a
 * PodDisruptionBudget only makes a victim less preferred, it is not enforced). The pod stays
 * unschedulable until the victims are gone; then the next attempt places it. The answer is the
 * attempt's outcome with upstream's {@code preemption: ...} note on its message. Calls are
 * serialised, so that two preemptors do not pick the same victims from the same snapshot. A member
 * of a PodGroup is weighed as a victim by its group's priority, and a group evicted whole is
 * recorded so that its claim is freed for the preemptor even across a restart ({@link
 * EmptiedGroups}).
 */
public final class Preemption {

  /** Attempts that no eviction can help: a user must act, or the search ran out of time. */
  private static final Set<String> NOT_HELPED =
      Set.of(
          "ClaimMissing",
          "ClaimBeingDeleted",
          "UnsupportedVolume",
          "VolumeUnschedulable",
          "DeadlineExceeded");

  static final String NEVER = "preemption: not eligible due to preemptionPolicy=Never.";
  static final String GANG =
      "preemption: not tried for a member of a PodGroup (victims would be chosen for one member, "
          + "not for the whole gang).";
  static final String TERMINATING =
      "preemption: not eligible due to a terminating pod on the nominated node.";
  static final String RELEASING =
      "preemption: not needed, the nominated node fits once the claims of pods gone are"
          + " released.";

  private final ClusterView view;
  private final Nominations nominations;
  private final PreemptionWriter writer;
  private final EventRecorder events;
  private final Function<List<ResourceClaim>, Allocator> allocatorOf;
  private final Supplier<List<PodDisruptionBudget>> budgets;
  private final TemplateMode mode;
  private final String scheduler;
  private final BooleanSupplier mayWrite;

  /** Where PodGroups are read, for their disruption mode; none: every pod is a victim alone. */
  private volatile PodGroups groups = PodGroups.NONE;

  /** How a PodGroup's claim is freed once its members are gone; see {@link #placeGangsWith}. */
  private volatile GroupClaimRelease groupClaims = (claim, group) -> false;

  /** Per preemptor, the PodGroups whose every placed member it evicted. */
  private final EmptiedGroups emptied;

  /** Frees claim {@code claim} of PodGroup {@code group} (in the claim's namespace), if unused. */
  @FunctionalInterface
  public interface GroupClaimRelease {
    boolean release(ResourceClaim claim, String group);
  }

  public Preemption(
      ClusterView view,
      Nominations nominations,
      PreemptionWriter writer,
      EventRecorder events,
      Function<List<ResourceClaim>, Allocator> allocatorOf,
      Supplier<List<PodDisruptionBudget>> budgets,
      TemplateMode mode,
      String scheduler,
      BooleanSupplier mayWrite) {
    this.view = view;
    this.nominations = nominations;
    this.writer = writer;
    this.events = events;
    this.allocatorOf = allocatorOf;
    this.budgets = budgets;
    this.mode = mode;
    this.scheduler = scheduler;
    this.mayWrite = mayWrite;
    this.emptied = new EmptiedGroups(view);
    nominations.restoreFrom(view, scheduler, this::promisedOn);
  }

  /**
   * Evicts the members of a PodGroup disrupted whole ({@link PodGroupPolicy#disruptedWhole}) all
   * together or none, and frees the group's claims through {@code release} once they are gone.
   */
  public void placeGangsWith(PodGroups groups, GroupClaimRelease release) {
    this.groups = groups;
    this.groupClaims = release;
  }

  /** The outcome of an attempt of {@code pod} that ended {@code failed}, after preempting. */
  public synchronized Outcome.Unschedulable afterUnschedulable(
      Pod pod, Outcome.Unschedulable failed) {
    if (NOT_HELPED.contains(failed.reason()) || !mayWrite.getAsBoolean()) {
      return failed;
    }
    if (!VictimSearch.mayPreempt(pod)) {
      return noted(failed, NEVER);
    }
    if (PodGroupPolicy.groupOf(pod).isPresent()) {
      // evicting for one member could empty nodes for a gang that still cannot fit as a whole
      return noted(failed, GANG);
    }
    String nominated = pod.getStatus() == null ? null : pod.getStatus().getNominatedNodeName();
    List<Pod> live = view.pods().stream().filter(p -> !Pods.isTerminal(p)).toList();
    List<Pod> placed = live.stream().filter(Pods::isBound).toList();
    String uid = pod.getMetadata().getUid();
    Set<String> emptiedGroups = emptied.of(uid, nominated != null, groups);
    ToIntFunction<Pod> victimPriority = victimPriorities();
    if (nominated != null
        && (victimLeaving(pod, nominated, placed, victimPriority)
            || EmptiedGroups.leaving(emptiedGroups, placed))) {
      return noted(failed, TERMINATING);
    }
    List<Node> nodes = NodeFilter.sortedByName(view.nodes());
    Map<String, List<Pod>> byNode = new LinkedHashMap<>();
    nodes.forEach(n -> byNode.put(n.getMetadata().getName(), new ArrayList<>()));
    placed.forEach(
        p -> {
          List<Pod> on = byNode.get(p.getSpec().getNodeName());
          if (on != null) {
            on.add(p);
          }
        });
    int priority = VictimSearch.priority(pod);
    boolean anyLower = placed.stream().anyMatch(p -> victimPriority.applyAsInt(p) < priority);
    if (!anyLower && nominated == null) {
      // the usual case, all pods of one priority: nothing to simulate, no claims listed
      forget(uid);
      return noted(failed, notHelpful(priority, byNode, victimPriority));
    }
    PreemptionFits fits = fits(pod, nodes, live, placed, emptiedGroups);
    if (nominated != null && fits.fits(nominated, List.of())) {
      // the victims are gone, their claims not yet deallocated: no reason to evict more; a
      // PodGroup's claim nobody else frees while the group exists
      emptied.release(emptiedGroups, placed, groupClaims, mayWrite);
      return noted(failed, RELEASING);
    }
    Optional<VictimSearch.Candidate> chosen =
        anyLower
            ? VictimSearch.search(pod, byNode, budgets, fits, units(placed), victimPriority)
            : Optional.empty();
    if (chosen.isEmpty()) {
      forget(uid);
      if (nominated != null) {
        writer.nominate(pod, null);
      }
      return noted(failed, notHelpful(priority, byNode, victimPriority));
    }
    VictimSearch.Candidate c = chosen.get();
    // the search may have outlasted this replica's Lease: asked again right before the writes
    if (!mayWrite.getAsBoolean()) {
      return failed;
    }
    Map<String, AllocationResult> promised =
        fits.allocations(c.node(), c.victims()).orElse(Map.of());
    nominations.hold(pod, c.node(), promised);
    // before any eviction: a restarted or newly elected scheduler reads it back
    emptied.add(uid, EmptiedGroups.by(c.victims(), placed), c.node(), groups);
    writer.nominate(pod, c.node());
    String names = c.victims().stream().map(Pods::key).collect(Collectors.joining(", "));
    events.normal(
        pod, "Preempting", "Preempting " + names + " on node " + c.node() + " to make room");
    for (Pod victim : c.victims()) {
      if (!mayWrite.getAsBoolean()) {
        return failed;
      }
      writer.evict(victim, scheduler);
      // upstream 1.37's words (regarding the victim, related to the preemptor)
      events.normal(
          victim,
          "Preempted",
          "Preempted by pod " + pod.getMetadata().getUid() + " on node " + c.node());
    }
    return noted(failed, "preemption: nominated node " + c.node() + ", preempting " + names + ".");
  }

  /**
   * What a preemptor nominated to {@code node} before this process knew of it (a restart, another
   * leader) would take there once the pods leaving it are gone: those of lower priority on the node
   * being deleted, and the members of the PodGroups it emptied. The preemptor's decision is not
   * kept, so it is simulated again; none when it would not fit (the victims not evicted yet: its
   * next attempt preempts again). Not synchronized: called under the scheduling lock, which {@link
   * #afterUnschedulable} takes inside this object's.
   */
  private Map<String, AllocationResult> promisedOn(Pod pod, String node) {
    String uid = pod.getMetadata().getUid();
    List<Pod> live = view.pods().stream().filter(p -> !Pods.isTerminal(p)).toList();
    List<Pod> placed = live.stream().filter(Pods::isBound).toList();
    Set<String> emptiedGroups = emptied.of(uid, true, groups);
    ToIntFunction<Pod> victimPriority = victimPriorities();
    int priority = VictimSearch.priority(pod);
    List<Pod> leaving =
        placed.stream()
            .filter(p -> p.getMetadata().getDeletionTimestamp() != null)
            .filter(
                p ->
                    node.equals(p.getSpec().getNodeName())
                            && victimPriority.applyAsInt(p) < priority
                        || PodGroupPolicy.groupOf(p)
                            .map(
                                g ->
                                    emptiedGroups.contains(
                                        p.getMetadata().getNamespace() + "/" + g))
                            .orElse(false))
            .toList();
    return fits(pod, view.nodes(), live, placed, emptiedGroups)
        .allocations(node, leaving)
        .orElse(Map.of());
  }

  /**
   * Whether {@code pod} fits where pods go, over the view's claims now: {@code live} the pods not
   * finished, {@code placed} those of them bound.
   */
  private PreemptionFits fits(
      Pod pod, List<Node> nodes, List<Pod> live, List<Pod> placed, Set<String> emptiedGroups) {
    return new PreemptionFits(
        pod,
        podClaims(pod),
        nodes,
        placed,
        live.stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet()),
        view.claims(),
        view.namespaceLabels(),
        emptiedGroups,
        allocatorOf,
        view.volumes());
  }

  /**
   * {@code pod}, bound, may be the last member of a PodGroup that preemption emptied to be placed
   * again: then the group's record of that preemption is set back ({@link
   * EmptiedGroups#placedAgain}).
   */
  public void memberBound(Pod pod) {
    if (PodGroupPolicy.groupOf(pod).isPresent() && mayWrite.getAsBoolean()) {
      emptied.placedAgain(pod, groups);
    }
  }

  /** The pod was placed: what it was promised is free again. */
  public void placed(String uid) {
    forget(uid);
  }

  private void forget(String uid) {
    nominations.release(uid);
    emptied.forget(uid);
  }

  /**
   * Each pod's priority as a victim: its PodGroup's ({@code spec.priority}, none: 0) when it names
   * one that exists, else its own, as upstream's {@code GetPodPriority} with the Workload API on;
   * where the API is not served no group exists, and each pod's own counts, as upstream's with the
   * gate off. Each group read once per call.
   */
  private ToIntFunction<Pod> victimPriorities() {
    PodGroups read = groups;
    Map<String, Optional<PodGroupPolicy>> byKey = new HashMap<>();
    return p -> {
      String ns = p.getMetadata().getNamespace();
      return PodGroupPolicy.groupOf(p)
          .flatMap(g -> byKey.computeIfAbsent(ns + "/" + g, k -> read.get(ns, g)))
          .map(PodGroupPolicy::priority)
          .orElseGet(() -> VictimSearch.priority(p));
    };
  }

  /** Each placed pod's victim unit: its whole PodGroup when the group is disrupted whole. */
  private VictimSearch.Units units(List<Pod> placed) {
    PodGroups read = groups;
    Map<String, Boolean> whole = new HashMap<>();
    return VictimSearch.Units.byGroup(
        placed,
        (ns, g) ->
            whole.computeIfAbsent(
                ns + "/" + g,
                k -> read.get(ns, g).map(PodGroupPolicy::disruptedWhole).orElse(false)));
  }

  /**
   * Upstream's {@code PodEligibleToPreemptOthers}: a pod that already preempted waits while a pod
   * of lower priority on its nominated node is terminating for a preemption.
   */
  private static boolean victimLeaving(
      Pod pod, String node, List<Pod> placed, ToIntFunction<Pod> victimPriority) {
    int priority = VictimSearch.priority(pod);
    return placed.stream()
        .filter(p -> node.equals(p.getSpec().getNodeName()))
        .filter(p -> victimPriority.applyAsInt(p) < priority)
        .anyMatch(Preemption::terminatingByPreemption);
  }

  static boolean terminatingByPreemption(Pod p) {
    return p.getMetadata().getDeletionTimestamp() != null
        && p.getStatus() != null
        && p.getStatus().getConditions() != null
        && p.getStatus().getConditions().stream()
            .anyMatch(
                c ->
                    "DisruptionTarget".equals(c.getType())
                        && "True".equals(c.getStatus())
                        && PreemptionWriter.REASON.equals(c.getReason()));
  }

  /** Upstream's summary when no node is a candidate, counted by reason. */
  static String notHelpful(
      int priority, Map<String, List<Pod>> byNode, ToIntFunction<Pod> victimPriority) {
    Map<String, Integer> counts = new TreeMap<>();
    byNode
        .values()
        .forEach(
            pods ->
                counts.merge(
                    pods.stream().anyMatch(p -> victimPriority.applyAsInt(p) < priority)
                        ? "Preemption is not helpful for scheduling"
                        : "No preemption victims found for incoming pod",
                    1,
                    Integer::sum));
    return "preemption: 0/"
        + byNode.size()
        + " nodes are available: "
        + counts.entrySet().stream()
            .map(e -> e.getValue() + " " + e.getKey())
            .collect(Collectors.joining(", "))
        + ".";
  }

  private static Outcome.Unschedulable noted(Outcome.Unschedulable failed, String note) {
    return new Outcome.Unschedulable(
        failed.message() + " " + note, failed.perClaim(), failed.reason());
  }

  /** The pod's claims as the informers show them (they exist: the attempt got past them). */
  private List<ResourceClaim> podClaims(Pod pod) {
    ClaimLookup lookup =
        new ClaimLookup() {
          @Override
          public Optional<ResourceClaim> claim(String namespace, String name) {
            return view.claim(namespace, name);
          }

          @Override
          public List<ResourceClaim> ownedBy(String namespace, String podUid) {
            return view.claimsOwnedBy(namespace, podUid);
          }

          @Override
          public Optional<ResourceClaimTemplate> template(String namespace, String name) {
            return view.template(namespace, name);
          }
        };
    Map<String, ResourceClaim> byUid = new LinkedHashMap<>();
    PodClaimResolver.resolve(pod, lookup, mode)
        .claims()
        .values()
        .forEach(c -> byUid.putIfAbsent(c.getMetadata().getUid(), c));
    return new ArrayList<>(byUid.values());
  }
}
