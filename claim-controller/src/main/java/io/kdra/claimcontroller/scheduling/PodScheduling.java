package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.ClaimLookup;
import io.kdra.claimcontroller.domain.NodeFilter;
import io.kdra.claimcontroller.domain.NodeScoring;
import io.kdra.claimcontroller.domain.PlacedPodFilters;
import io.kdra.claimcontroller.domain.PodClaimResolver;
import io.kdra.claimcontroller.domain.PodClaimResolver.Step;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.Reservation;
import io.kdra.claimcontroller.domain.SearchDeadline;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.domain.UnsupportedVolumes;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.ExtendedClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodGroups;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.core.alloc.AllocatedState;
import io.kdra.core.alloc.Deadline;
import io.kdra.core.alloc.NodeSelectors;
import io.kdra.core.extended.ExtendedResourceClaims;
import io.kdra.events.EventRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * One scheduling attempt for one pod, in the scheduler's order: make sure the pod's claims exist
 * (creating template-derived ones in own mode), filter nodes, score them ({@link NodeScoring},
 * kube-scheduler's default score plugins), allocate the unallocated claims together on one node
 * (the allocator walks the nodes highest score first, {@link ScoreOrder}, and adds the
 * DynamicResources score), reserve every claim for the pod (finalizer, then allocation and {@code
 * reservedFor}), then bind. Decisions come from the domain package and the {@link PodAllocator};
 * writes go through the k8s adapters.
 *
 * <p>Thread-safety: claim creation may run concurrently for different pods. The decision (node
 * filter and allocation) runs under one lock and ends by assuming its devices and node in {@link
 * RecentWrites}, so that two pods never get the same device from this process; the writes ({@link
 * ReserveAndBind}) run outside it, several pods at once, in the scheduler's order per pod, and a
 * failed one releases what it assumed. So that no pod holds the lock for long, the device search
 * stops at the attempt's {@link SearchDeadline} (the pod is then unschedulable with that reason and
 * retried by backoff), and the diagnosis of a pod that fits nowhere runs after the lock. Two
 * processes never schedule at once: only the elected leader runs.
 */
public final class PodScheduling {

  /** Not this replica's turn to write: its Lease is held by another or not renewed lately. */
  static final Outcome FENCED =
      new Outcome.Retry(
          "this replica's Lease is not fresh; not "
              + "writing until it is renewed or another replica leads");

  private final ClusterView view;
  private final RecentWrites recent;
  private final ClaimWriter claims;
  private final PodWriter pods;
  private final EventRecorder events;
  private final PodAllocator allocator;
  private final TemplateMode mode;
  private final ClaimTracer tracer;
  private final Object lock = new Object();
  private final BooleanSupplier mayWrite;
  private final SearchDeadline deadline;
  private final LongSupplier nanoClock;
  private final ReserveAndBind writes;
  private final ExtendedClaimWriter extendedClaims;
  private final ExtendedClaimWrites extendedWrites;

  /**
   * What every claim's allocation holds and what each node's pods use, kept across attempts from
   * the view's change notices; read under {@link #lock}, as the three below.
   */
  private final AllocatedClaims allocated;

  private final NodeUsageCache usage;

  /** What preemptors were promised: kept from pods of no higher priority ({@link Preemption}). */
  private final Nominations nominations = new Nominations();

  /** Gangs (PodGroups) placed whole; see {@link #placeGangsWith}. */
  private volatile GangScheduling gangs;

  /** Striped locks serialising the claim creation of each PodGroup. */
  private static final Object[] GROUP_LOCKS = new Object[64];

  static {
    for (int i = 0; i < GROUP_LOCKS.length; i++) {
      GROUP_LOCKS[i] = new Object();
    }
  }

  /** Where the PodGroups are read (and their claims recorded); set with {@link #gangs}. */
  private volatile PodGroups groups = PodGroups.NONE;

  private List<Node> sortedNodes = List.of();
  private Set<Node> sortedNodeSet = Set.of();
  private final AllocatableCache allocatable = new AllocatableCache();

  public PodScheduling(
      ClusterView view,
      RecentWrites recent,
      ClaimWriter claims,
      PodWriter pods,
      PodBinder binder,
      EventRecorder events,
      PodAllocator allocator,
      TemplateMode mode,
      ClaimTracer tracer) {
    this(view, recent, claims, pods, binder, events, allocator, mode, tracer, () -> true);
  }

  /**
   * The limits the constructors without a clock pass (the service's defaults, see {@code
   * ClaimControllerConfig}); with their clock standing still they never run out.
   */
  private static final SearchDeadline UNTIMED_DEADLINE =
      new SearchDeadline(Duration.ofSeconds(1), Duration.ofSeconds(10));

  /**
   * As above, writing only while {@code mayWrite} (this replica's Lease is fresh: see {@code
   * io.kdra.leadership.LeaseFence}); checked before claims are created and again, under the lock,
   * before allocations are written. Without a clock of its own, the device search is bounded by the
   * allocator's step budget alone (the service passes its clock and deadline to the constructor
   * below).
   */
  public PodScheduling(
      ClusterView view,
      RecentWrites recent,
      ClaimWriter claims,
      PodWriter pods,
      PodBinder binder,
      EventRecorder events,
      PodAllocator allocator,
      TemplateMode mode,
      ClaimTracer tracer,
      BooleanSupplier mayWrite) {
    this(
        view,
        recent,
        claims,
        pods,
        binder,
        events,
        allocator,
        mode,
        tracer,
        mayWrite,
        UNTIMED_DEADLINE,
        () -> 0L);
  }

  /**
   * As above, each attempt's device search limited by {@code deadline}, read on {@code nanoClock}
   * ({@link System#nanoTime} in production).
   */
  public PodScheduling(
      ClusterView view,
      RecentWrites recent,
      ClaimWriter claims,
      PodWriter pods,
      PodBinder binder,
      EventRecorder events,
      PodAllocator allocator,
      TemplateMode mode,
      ClaimTracer tracer,
      BooleanSupplier mayWrite,
      SearchDeadline deadline,
      LongSupplier nanoClock) {
    this.deadline = deadline;
    this.nanoClock = nanoClock;
    this.mayWrite = mayWrite;
    this.tracer = tracer;
    this.view = view;
    this.recent = recent;
    this.claims = claims;
    this.pods = pods;
    this.events = events;
    this.allocator = allocator;
    this.mode = mode;
    this.writes = new ReserveAndBind(view, recent, claims, binder, events, tracer, mayWrite);
    this.extendedClaims = ExtendedClaimWriter.of(claims);
    this.extendedWrites = new ExtendedClaimWrites(recent, extendedClaims, writes, events);
    AtomicBoolean live = new AtomicBoolean();
    this.allocated =
        AllocatedClaims.over(
            k -> view.claim(k.namespace(), k.name()), view::claims, recent, live::get);
    this.usage = new NodeUsageCache(k -> view.pod(k.namespace(), k.name()), view::pods, live::get);
    live.set(
        view.subscribe(
            new ClusterView.Changes() {
              @Override
              public void claim(String namespace, String name) {
                allocated.claimChanged(namespace, name);
              }

              @Override
              public void claimDeleted(String uid) {
                recent.claimDeleted(uid);
              }

              @Override
              public void pod(String namespace, String name) {
                usage.podChanged(namespace, name);
              }
            }));
  }

  /**
   * Ensures the pod's claims exist and are recorded in its status; returns the resolution, or empty
   * once this replica's Lease is no longer fresh. The fence is asked right before each write, as
   * for allocations: creating a claim from a template can take a while under a slow API server.
   */
  Optional<PodClaimResolver.Resolution> ensureClaims(Pod pod) {
    return ensureClaims(pod, null);
  }

  /**
   * As above for a member of {@code group} (null: of none): the group's own claims are made first
   * ({@link #ensureGroupClaims}), and the entries bound to them use them.
   */
  Optional<PodClaimResolver.Resolution> ensureClaims(Pod pod, PodGroupClaims group) {
    if (group != null && !ensureGroupClaims(pod.getMetadata().getNamespace(), group)) {
      return Optional.empty();
    }
    PodClaimResolver.Resolution r = PodClaimResolver.resolve(pod, lookup(), mode, group);
    Map<String, String> record = new LinkedHashMap<>();
    for (Step.Record s : r.of(Step.Record.class)) {
      record.put(s.entry(), s.claim().getMetadata().getName());
    }
    for (Step.Create s : r.of(Step.Create.class)) {
      if (!mayWrite.getAsBoolean()) {
        return Optional.empty();
      }
      ClaimTracer.TraceSpan span = tracer.start(null, "create").link(TraceLinks.of(s.template()));
      ResourceClaim created;
      try {
        created = claims.create(s.desired(), span.annotations());
        span.attribute(
                "claim",
                created.getMetadata().getNamespace() + "/" + created.getMetadata().getName())
            .attribute("pod", Pods.key(pod))
            .end();
      } catch (KubernetesClientException e) {
        span.end(e);
        if (ApiRefusal.isRefusal(e)) {
          // upstream's reason and message shape, with the API server's words unchanged
          String why =
              "PodResourceClaim "
                  + s.entry()
                  + ": create ResourceClaim "
                  + nameOf(s.desired())
                  + ": "
                  + ApiRefusal.message(e);
          events.warning(pod, "FailedResourceClaimCreation", why);
          throw new ApiRefusal(why);
        }
        throw e;
      } catch (RuntimeException e) {
        span.end(e);
        throw e;
      }
      recent.created(created);
      record.put(s.entry(), created.getMetadata().getName());
    }
    for (Step.MissingTemplate s : r.of(Step.MissingTemplate.class)) {
      // Upstream's reason and message shape, so that the two controllers read alike.
      events.warning(
          pod,
          "FailedResourceClaimCreation",
          "PodResourceClaim "
              + s.entry()
              + ": resource claim template \""
              + s.template()
              + "\": not found");
    }
    if (!record.isEmpty()) {
      if (!mayWrite.getAsBoolean()) {
        return Optional.empty();
      }
      pods.recordClaims(pod, record);
    }
    return Optional.of(r);
  }

  /** A claim to create by its name, or the prefix the API server will complete. */
  private static String nameOf(ResourceClaim desired) {
    String name = desired.getMetadata().getName();
    return name != null && !name.isEmpty() ? name : desired.getMetadata().getGenerateName();
  }

  /**
   * Creates the PodGroup's claims from its templates, as upstream's resourceclaim controller does
   * for a PodGroup ({@link PodGroupClaims#plan}), and records them in the group's status; only in
   * own mode (in adopt mode kube-controller-manager does). Done when a member is attempted: this
   * controller watches no PodGroups. Returns false once this replica's Lease is no longer fresh.
   */
  private boolean ensureGroupClaims(String namespace, PodGroupClaims group) {
    if (mode != TemplateMode.OWN || group.entries().isEmpty()) {
      return true;
    }
    // members are attempted concurrently: one at a time per group, so that the second sees the
    // first's claim (upstream's single work queue per PodGroup does the same)
    synchronized (GROUP_LOCKS[Math.floorMod(group.uid().hashCode(), GROUP_LOCKS.length)]) {
      return ensureGroupClaimsLocked(namespace, group);
    }
  }

  private boolean ensureGroupClaimsLocked(String namespace, PodGroupClaims group) {
    List<Step> plan = group.plan(namespace, lookup());
    Map<String, String> made = new LinkedHashMap<>();
    for (Step s : plan) {
      if (s instanceof Step.Record rec) {
        made.put(rec.entry(), rec.claim().getMetadata().getName());
      } else if (s instanceof Step.Create c) {
        if (!mayWrite.getAsBoolean()) {
          return false;
        }
        ResourceClaim created = claims.create(c.desired(), Map.of());
        recent.created(created);
        made.put(c.entry(), created.getMetadata().getName());
      }
    }
    if (!made.isEmpty()) {
      if (!mayWrite.getAsBoolean()) {
        return false;
      }
      groups.recordClaims(namespace, group.name(), group.statusesWith(made));
    }
    return true;
  }

  /** The promises of preemptors, which every decision respects. */
  public Nominations nominations() {
    return nominations;
  }

  /** Schedules a pending pod: its first attempt. */
  public Outcome schedule(Pod pod) {
    return schedule(pod, 1);
  }

  /**
   * Schedules a pending pod, whose attempt number this is (1 for its first; the device search's
   * limit grows with it, see {@link SearchDeadline#limit}).
   */
  public Outcome schedule(Pod pod, int attempt) {
    if (!mayWrite.getAsBoolean()) {
      return FENCED; // not even the search: another replica leads
    }
    Optional<PodGroupPolicy> policy = groupOf(pod);
    PodGroupClaims group = policy.map(PodGroupPolicy::claims).orElse(null);
    Optional<PodClaimResolver.Resolution> ensured;
    try {
      ensured = ensureClaims(pod, group);
    } catch (ApiRefusal refused) {
      return new Outcome.Unschedulable(refused.getMessage(), Map.of(), "ClaimRefused");
    }
    if (ensured.isEmpty()) {
      return FENCED;
    }
    PodClaimResolver.Resolution r = ensured.get();
    if (pod.getSpec().getSchedulingGates() != null
        && !pod.getSpec().getSchedulingGates().isEmpty()) {
      // upstream's SchedulingGates PreEnqueue: not tried until the gates are gone (the pod's own
      // update brings it back); its claims are created meanwhile, as kube-controller-manager does
      return new Outcome.Waiting("Scheduling is blocked due to non-empty scheduling gates");
    }
    if (!r.of(Step.Create.class).isEmpty()) {
      return new Outcome.Waiting("created claims; scheduling once the informers show them");
    }
    List<String> missing = missing(r);
    if (!missing.isEmpty()) {
      return new Outcome.Unschedulable(String.join("; ", missing), Map.of(), "ClaimMissing");
    }
    if (!r.complete()) {
      return new Outcome.Waiting(
          r.steps().stream()
              .filter(s -> s instanceof Step.Wait)
              .map(s -> ((Step.Wait) s).reason())
              .findFirst()
              .orElse("waiting for claims"));
    }
    List<String> deleting = beingDeleted(r);
    if (!deleting.isEmpty()) {
      // as kube-scheduler: unschedulable, with the reason on the pod; a claim kept by its
      // delete-protection finalizer (another pod still uses it) may stay so for long
      return new Outcome.Unschedulable(String.join("; ", deleting), Map.of(), "ClaimBeingDeleted");
    }
    Optional<String> volumes = UnsupportedVolumes.refusal(pod);
    if (volumes.isPresent()) {
      return new Outcome.Unschedulable(volumes.get(), Map.of(), "UnsupportedVolume");
    }
    GangScheduling gang = gangs;
    Optional<Outcome> asMember =
        gang == null ? Optional.empty() : gang.schedule(pod, attempt, policy);
    if (asMember.isPresent()) {
      return asMember.get();
    }
    List<ResourceClaim> podClaims = distinct(r.claims().values());
    List<ResourceClaim> unallocated = new ArrayList<>();
    for (ResourceClaim c : podClaims) {
      if (c.getStatus() == null || c.getStatus().getAllocation() == null) {
        unallocated.add(c);
      }
    }
    ExtendedResources.Need extended = ExtendedResources.need(pod, view);
    if (extended != null && extended.served()) {
      Optional<ResourceClaim> earlier =
          ExtendedResourceClaims.find(
              pod, lookup().ownedBy(pod.getMetadata().getNamespace(), pod.getMetadata().getUid()));
      if (earlier.isPresent()) {
        Outcome stale = earlierExtendedClaim(pod, earlier.get(), podClaims);
        if (stale != null) {
          return stale;
        }
        extended = null; // the claim from before carries them, allocated on its node
      }
    }
    // Only the decision is serialised: once its devices and node are assumed (recent), the
    // next pod is decided while this one's claims are written and it is bound.
    Decided decided;
    synchronized (lock) {
      if (!mayWrite.getAsBoolean()) {
        return FENCED;
      }
      decided = decide(pod, podClaims, unallocated, extended, null, attempt);
      if (decided instanceof Placement placement) {
        assume(pod, podClaims, placement);
      }
    }
    if (decided instanceof NotPlaced no) {
      return no.outcome();
    }
    if (decided instanceof Unexplained u) {
      // the diagnosis (the "why not" message) reads only the search's snapshot: outside the lock,
      // so that the next pod's search need not wait for it
      PodAllocator.Decision.NotPlaced np = u.decision().explain();
      u.spans().values().forEach(ClaimTracer.TraceSpan::end);
      return new Outcome.Unschedulable(notPlaced(u.nodes(), np), np.perClaim(), np.reason());
    }
    return write(pod, podClaims, (Placement) decided, sharedClaims(pod, group, r));
  }

  /** The PodGroup the pod names, read once per attempt; empty without one or without gangs. */
  private Optional<PodGroupPolicy> groupOf(Pod pod) {
    GangScheduling gang = gangs;
    Optional<String> name = PodGroupPolicy.groupOf(pod);
    if (gang == null || name.isEmpty()) {
      return Optional.empty();
    }
    return groups.get(pod.getMetadata().getNamespace(), name.get());
  }

  /**
   * The pod's claims that its PodGroup's members share (claim UID to the group's reference), to be
   * reserved for the group rather than the pod.
   */
  static Map<String, ResourceClaimConsumerReference> sharedClaims(
      Pod pod, PodGroupClaims group, PodClaimResolver.Resolution r) {
    Map<String, ResourceClaimConsumerReference> shared = new LinkedHashMap<>();
    if (group == null) {
      return shared;
    }
    Map<String, ResourceClaim> byEntry = r.claims();
    for (PodResourceClaim e : Pods.claimEntries(pod)) {
      ResourceClaim c = byEntry.get(e.getName());
      if (c != null && group.boundEntry(pod, e).isPresent()) {
        shared.put(c.getMetadata().getUid(), group.consumer());
      }
    }
    return shared;
  }

  /**
   * Places members of a PodGroup whole ({@link GangScheduling}); pods of no group, or of one whose
   * API the server does not serve, are scheduled alone as before.
   */
  public void placeGangsWith(PodGroups groups) {
    this.groups = groups;
    this.gangs = new GangScheduling(this, view, recent, groups);
  }

  /** The lock the decisions run under (for {@link GangScheduling}'s pass over several pods). */
  Object decisionLock() {
    return lock;
  }

  boolean mayWrite() {
    return mayWrite.getAsBoolean();
  }

  /**
   * Under the lock: {@link #decide} for one gang member, its nodes narrowed to {@code within}; a
   * placement is assumed before it is returned ({@link #unassume} gives it back).
   */
  Decided decideMember(
      Pod pod,
      List<ResourceClaim> podClaims,
      List<ResourceClaim> unallocated,
      ExtendedResources.Need extended,
      Predicate<Node> within,
      int attempt) {
    Decided d = decide(pod, podClaims, unallocated, extended, within, attempt);
    if (d instanceof Placement placement) {
      assume(pod, podClaims, placement);
    }
    return d;
  }

  /** Under the lock: forgets what {@link #assume} took for a placement never written. */
  void unassume(Pod pod, List<ResourceClaim> podClaims, Placement placement) {
    placement.allocations().keySet().forEach(recent::forgetUnsent);
    podClaims.forEach(
        c -> allocated.claimChanged(c.getMetadata().getNamespace(), c.getMetadata().getName()));
    recent.forgetBinding(pod.getMetadata().getUid());
    placement.spans().values().forEach(ClaimTracer.TraceSpan::end);
  }

  /** Claims as {@link #ensureClaims} finds them for a member of {@code group}, creating none. */
  PodClaimResolver.Resolution resolve(Pod pod, PodGroupClaims group) {
    return PodClaimResolver.resolve(pod, lookup(), mode, group);
  }

  /**
   * Writes a decided and assumed placement: reservations (those in {@code shared} for the pod's
   * PodGroup, see {@link #sharedClaims}), then the binding.
   */
  Outcome write(
      Pod pod,
      List<ResourceClaim> podClaims,
      Placement placement,
      Map<String, ResourceClaimConsumerReference> shared) {
    try {
      linkSlices(placement);
      Outcome o =
          placement.special() == null
              ? writes.reserveAndBind(
                  pod,
                  podClaims,
                  placement.node(),
                  placement.allocations(),
                  placement.spans(),
                  shared,
                  () -> {})
              : extendedWrites.reserveAndBind(
                  pod,
                  podClaims,
                  placement.node(),
                  placement.allocations(),
                  placement.spans(),
                  placement.special());
      placement.spans().values().forEach(ClaimTracer.TraceSpan::end);
      if (!(o instanceof Outcome.Bound)) {
        recent.forgetBinding(pod.getMetadata().getUid());
      }
      return o;
    } catch (RuntimeException e) {
      placement.spans().values().forEach(s -> s.end(e));
      // an assumption whose write never went out would otherwise stay for the claim's lifetime
      placement.allocations().keySet().forEach(recent::forgetUnsent);
      throw e;
    }
  }

  /** Under the lock: the placement's devices and node, taken until its writes are done. */
  private void assume(Pod pod, List<ResourceClaim> podClaims, Placement placement) {
    if (placement.special() != null) {
      recent.created(placement.special().claim());
    }
    placement.allocations().forEach(recent::allocated);
    // (RecentWrites tells the UIDs too; the keys make the next attempt's recheck direct)
    podClaims.forEach(
        c -> allocated.claimChanged(c.getMetadata().getNamespace(), c.getMetadata().getName()));
    if (placement.special() != null) {
      ResourceClaim special = placement.special().claim();
      allocated.claimChanged(special.getMetadata().getNamespace(), special.getMetadata().getName());
    }
    recent.binding(pod, placement.node());
  }

  /**
   * Links each recorded allocate span to the slices its devices came from (the slices of the
   * devices' pools), outside the scheduling lock.
   */
  private void linkSlices(Placement placement) {
    placement
        .allocations()
        .forEach(
            (uid, a) -> {
              ClaimTracer.TraceSpan span = placement.spans().get(uid);
              if (span != null && span.recording()) {
                TraceLinks.ofSlices(view::poolSlices, a).forEach(span::link);
              }
            });
  }

  /**
   * The node and allocations decided for a pod, with a span per claim, started: what {@link
   * #schedule} writes.
   */
  record Placement(
      String node,
      Map<String, AllocationResult> allocations,
      Map<String, ClaimTracer.TraceSpan> spans,
      ExtendedResources.InMemoryClaim special)
      implements Decided {}

  /** Why the pod was not placed: the attempt's outcome. */
  record NotPlaced(Outcome outcome) implements Decided {}

  /**
   * No node took the claims; the allocator's diagnosis is still to run, outside the lock, then the
   * spans end.
   */
  record Unexplained(
      NodeFilter.Result nodes,
      PodAllocator.Decision.Unexplained decision,
      Map<String, ClaimTracer.TraceSpan> spans)
      implements Decided {}

  sealed interface Decided permits Placement, NotPlaced, Unexplained {}

  /**
   * Under the lock: where the pod goes, or why it cannot go anywhere now; the device search stops
   * at the deadline of the pod's attempt number {@code attempt}, counted from its start.
   */
  private Decided decide(
      Pod pod,
      List<ResourceClaim> podClaims,
      List<ResourceClaim> unallocated,
      ExtendedResources.Need extended,
      Predicate<Node> within,
      int attempt) {
    List<Pod> assumedBound =
        recent.assumedBound(
            p -> {
              // rechecked now: the informer's cache may show the pod bound before its event's
              // notice comes, and it no longer counts as being bound from here on
              usage.podChanged(p.getMetadata().getNamespace(), p.getMetadata().getName());
              return view.pod(p.getMetadata().getNamespace(), p.getMetadata().getName());
            });
    List<Node> allNodes = sortedNodes();
    List<Nominations.Hold> held = nominations.against(pod, view::pod);
    Map<String, NodeFilter.NodeUsage> used = Nominations.withHeld(held, usage.usage(assumedBound));
    AllocatedState state = Nominations.withHeld(held, allocated.state());
    String uid = pod.getMetadata().getUid();
    PlacedPodFilters others =
        PlacedPodFilters.prefilter(
            pod,
            allNodes,
            () ->
                usage.placed().stream().filter(p -> !uid.equals(p.getMetadata().getUid())).toList(),
            usage.placedWithAntiAffinity().stream()
                .filter(p -> !uid.equals(p.getMetadata().getUid()))
                .toList(),
            view::namespaceLabels);
    NodeFilter.Result nodes =
        NodeFilter.filter(
            pod, allNodes, used, NodeSelectors.ofAllocated(podClaims), allocatable::of, others);
    if (within != null) {
      nodes = GangScheduling.within(nodes, within);
    }
    ExtendedResources.Filtered byExtended = null;
    if (extended != null) {
      byExtended =
          ExtendedResources.filter(
              extended,
              nodes,
              () -> {
                List<Pod> all = new ArrayList<>(assumedBound);
                all.addAll(view.pods());
                return all;
              });
      nodes = byExtended.nodes();
    }
    if (nodes.feasible().isEmpty()) {
      return new NotPlaced(new Outcome.Unschedulable(nodes.summary(), Map.of(), "NoFeasibleNode"));
    }
    NodeScoring.Scores scores =
        NodeScoring.score(
            new NodeScoring.Input(
                pod,
                nodes.feasible(),
                allNodes,
                used,
                allocatable::of,
                () -> others(uid, usage.placed()),
                others(uid, usage.placedWithAffinity()),
                view::namespaceLabels));
    Map<String, ClaimTracer.TraceSpan> spans = new LinkedHashMap<>();
    for (ResourceClaim c : podClaims) {
      spans.put(
          c.getMetadata().getUid(),
          tracer
              .start(c, unallocated.contains(c) ? "allocate" : "reserve")
              .attribute("pod", Pods.key(pod))
              .attribute("candidates", nodes.feasible().size()));
    }
    Duration limit = deadline.limit(attempt);
    long start = nanoClock.getAsLong();
    Deadline searchDeadline = () -> SearchDeadline.passed(start, limit, nanoClock.getAsLong());
    try {
      String node;
      Map<String, AllocationResult> allocations = Map.of();
      ExtendedResources.InMemoryClaim special = null;
      if (extended != null && extended.served()) {
        ExtendedResources.Decision xd =
            ExtendedResources.allocate(
                extended,
                byExtended,
                ScoreOrder.of(scores),
                unallocated,
                earlier(podClaims, unallocated),
                allocator,
                state,
                view,
                searchDeadline);
        Decided refused = refused(xd.decision(), nodes, spans);
        if (refused != null) {
          return refused;
        }
        PodAllocator.Decision.Placed placed = (PodAllocator.Decision.Placed) xd.decision();
        node = placed.node();
        allocations = placed.allocations();
        special = xd.claim();
        if (special != null) {
          spans.put(
              special.uid(),
              tracer
                  .start(special.claim(), "allocate")
                  .attribute("pod", Pods.key(pod))
                  .attribute("candidates", nodes.feasible().size()));
        }
      } else if (unallocated.isEmpty()) {
        node = scores.best().getMetadata().getName();
      } else {
        PodAllocator.Decision d =
            allocator.allocateRanked(
                pod,
                ScoreOrder.of(scores),
                unallocated,
                earlier(podClaims, unallocated),
                state,
                view,
                searchDeadline);
        Decided refused = refused(d, nodes, spans);
        if (refused != null) {
          return refused;
        }
        PodAllocator.Decision.Placed placed = (PodAllocator.Decision.Placed) d;
        node = placed.node();
        allocations = placed.allocations();
      }
      List<ResourceClaim> all = new ArrayList<>(podClaims);
      if (special != null) {
        all.add(special.claim());
      }
      for (ResourceClaim c : all) {
        AllocationResult a = allocations.get(c.getMetadata().getUid());
        spans
            .get(c.getMetadata().getUid())
            .attribute("node", node)
            .attribute(
                "devices",
                a == null
                    ? ""
                    : a.getDevices().getResults().stream()
                        .map(x -> x.getDriver() + "/" + x.getPool() + "/" + x.getDevice())
                        .collect(Collectors.joining(",")));
      }
      return new Placement(node, allocations, spans, special);
    } catch (RuntimeException e) {
      spans.values().forEach(s -> s.end(e));
      throw e;
    }
  }

  /** The pod's claims allocated before this attempt. */
  private static List<ResourceClaim> earlier(
      List<ResourceClaim> podClaims, List<ResourceClaim> unallocated) {
    return podClaims.stream().filter(c -> !unallocated.contains(c)).toList();
  }

  private static List<Pod> others(String uid, List<Pod> pods) {
    return pods.stream().filter(p -> !uid.equals(p.getMetadata().getUid())).toList();
  }

  /** What the attempt comes to when the allocator placed nothing; null when it placed the pod. */
  private static Decided refused(
      PodAllocator.Decision d, NodeFilter.Result nodes, Map<String, ClaimTracer.TraceSpan> spans) {
    if (d instanceof PodAllocator.Decision.NotPlaced np) {
      spans.values().forEach(ClaimTracer.TraceSpan::end);
      return new NotPlaced(
          new Outcome.Unschedulable(notPlaced(nodes, np), np.perClaim(), np.reason()));
    }
    if (d instanceof PodAllocator.Decision.Unexplained u) {
      return new Unexplained(nodes, u, spans);
    }
    return null;
  }

  /**
   * A special claim for the pod's extended resources from an earlier attempt: kube-scheduler
   * deletes it and starts again (its PostFilter). Returns null when the attempt goes on with it,
   * added to {@code podClaims}: it is allocated and reserved for the pod and recorded in the pod's
   * status, so only the binding was left (a restart, or this copy of the pod predates its binding).
   * While this process may still be binding the pod, nothing is touched.
   */
  private Outcome earlierExtendedClaim(
      Pod pod, ResourceClaim earlier, List<ResourceClaim> podClaims) {
    String name = earlier.getMetadata().getName();
    if (recent.isBinding(pod.getMetadata().getUid())) {
      return new Outcome.Retry(
          "pod " + Pods.key(pod) + " is being bound with its extended " + "resource claim " + name);
    }
    boolean recorded =
        pod.getStatus() != null
            && pod.getStatus().getExtendedResourceClaimStatus() != null
            && name.equals(pod.getStatus().getExtendedResourceClaimStatus().getResourceClaimName());
    if (recorded
        && earlier.getMetadata().getDeletionTimestamp() == null
        && earlier.getStatus() != null
        && earlier.getStatus().getAllocation() != null
        && Reservation.reserves(earlier, pod)) {
      podClaims.add(earlier);
      return null;
    }
    extendedClaims.delete(earlier.getMetadata().getNamespace(), name);
    recent.forgetCreated(earlier.getMetadata().getUid());
    return new Outcome.Retry(
        "deleted the extended resource claim " + name + " of an earlier attempt; scheduling again");
  }

  /**
   * The view's nodes sorted by name, sorted again only when a node changed: the same list of the
   * same objects from one pod to the next also lets the allocator keep its node index.
   */
  private List<Node> sortedNodes() {
    List<Node> current = view.nodes();
    if (current.size() != sortedNodes.size()
        || !current.stream().allMatch(sortedNodeSet::contains)) {
      Set<Node> set = Collections.newSetFromMap(new IdentityHashMap<>());
      set.addAll(current);
      sortedNodes = NodeFilter.sortedByName(current);
      sortedNodeSet = set;
      allocatable.refresh(current);
    }
    return sortedNodes;
  }

  /**
   * For a pod bound without this controller (spec.nodeName set by its creator): reserve its
   * allocated claims for it, as upstream's resourceclaim controller does, so the kubelet may start
   * it. Unallocated claims are left alone: only a scheduler allocates.
   */
  public void reserveForBoundPod(Pod pod) {
    if (!mayWrite.getAsBoolean()) {
      return;
    }
    // a member bound by another member's pass records its group's claims here: without the
    // group its entries would look like its own and get claims of their own
    PodGroupClaims group =
        unrecordedTemplateEntry(pod) ? groupOf(pod).map(PodGroupPolicy::claims).orElse(null) : null;
    Optional<PodClaimResolver.Resolution> ensured;
    try {
      ensured = ensureClaims(pod, group);
    } catch (ApiRefusal refused) {
      return; // the pod has the Event; its next update or retry tries again
    }
    if (ensured.isEmpty()) {
      return;
    }
    for (ResourceClaim c : distinct(ensured.get().claims().values())) {
      // As the informer shows it, not as assumed: a pod this controller just bound is seen
      // bound before its claims' reservations are; their events bring the pod back here.
      Optional<ResourceClaim> cached =
          view.claim(c.getMetadata().getNamespace(), c.getMetadata().getName());
      if (cached.isEmpty()
          || cached.get().getStatus() == null
          || cached.get().getStatus().getAllocation() == null
          || PodGroupClaims.reservesPodOrGroup(cached.get(), pod)) {
        continue; // nothing to write: pod events reach bound pods often, API calls stay rare
      }
      if (!mayWrite.getAsBoolean()) {
        return;
      }
      claims.reserve(
          c.getMetadata().getNamespace(),
          c.getMetadata().getName(),
          cached.get(),
          pod,
          null,
          Map.of());
    }
  }

  /**
   * Whether a member of a PodGroup has a template entry its status does not record yet: only then
   * is the group read for a bound pod (pod events reach bound pods often).
   */
  private static boolean unrecordedTemplateEntry(Pod pod) {
    if (PodGroupPolicy.groupOf(pod).isEmpty()) {
      return false;
    }
    Set<String> recorded =
        pod.getStatus() == null || pod.getStatus().getResourceClaimStatuses() == null
            ? Set.of()
            : pod.getStatus().getResourceClaimStatuses().stream()
                .map(s -> s.getName())
                .collect(Collectors.toSet());
    return Pods.claimEntries(pod).stream()
        .anyMatch(e -> e.getResourceClaimTemplateName() != null && !recorded.contains(e.getName()));
  }

  /**
   * Claims as the informers show them, with this controller's created claims and assumed
   * allocations they do not show yet: O(1) and an index lookup, never a scan of every claim.
   */
  private ClaimLookup lookup() {
    return new ClaimLookup() {
      @Override
      public Optional<ResourceClaim> claim(String namespace, String name) {
        return view.claim(namespace, name)
            .or(() -> recent.created(namespace, name))
            .map(recent::withAssumed);
      }

      @Override
      public List<ResourceClaim> ownedBy(String namespace, String podUid) {
        Map<String, ResourceClaim> byUid = new LinkedHashMap<>();
        view.claimsOwnedBy(namespace, podUid).forEach(c -> byUid.put(c.getMetadata().getUid(), c));
        recent
            .createdFor(namespace, podUid)
            .forEach(c -> byUid.putIfAbsent(c.getMetadata().getUid(), c));
        return byUid.values().stream().map(recent::withAssumed).toList();
      }

      @Override
      public Optional<ResourceClaimTemplate> template(String namespace, String name) {
        return view.template(namespace, name);
      }
    };
  }

  static List<ResourceClaim> distinct(Collection<ResourceClaim> cs) {
    Map<String, ResourceClaim> byUid = new LinkedHashMap<>();
    cs.forEach(c -> byUid.putIfAbsent(c.getMetadata().getUid(), c));
    return new ArrayList<>(byUid.values());
  }

  /**
   * The {@code PodScheduled} message for a pod whose claims fit on none of the nodes that passed
   * the filter: the filter's summary when it rejected some, then the allocator's explanation.
   * Public so that {@code kubectl dra} words it as this controller does.
   */
  public static String notPlaced(NodeFilter.Result nodes, PodAllocator.Decision.NotPlaced np) {
    return nodes.rejected().isEmpty() ? np.message() : nodes.summary() + " " + np.message();
  }

  /**
   * Why the pod cannot be scheduled until a user acts: claims and templates it names that do not
   * exist (kube-scheduler's PreFilter reports these too, as unschedulable); joined with {@code ";
   * "}, the {@code PodScheduled} message. Public for {@code kubectl dra}.
   */
  /** Why each claim entry whose claim is being deleted keeps the pod off every node. */
  static List<String> beingDeleted(PodClaimResolver.Resolution r) {
    List<String> why = new ArrayList<>();
    r.claims()
        .forEach(
            (entry, claim) -> {
              if (claim.getMetadata().getDeletionTimestamp() != null) {
                why.add(
                    "pod claim entry "
                        + entry
                        + ": ResourceClaim "
                        + claim.getMetadata().getName()
                        + " is being deleted");
              }
            });
    return why;
  }

  public static List<String> missing(PodClaimResolver.Resolution r) {
    List<String> why = new ArrayList<>();
    for (Step.MissingClaim m : r.of(Step.MissingClaim.class)) {
      why.add("pod claim entry " + m.entry() + ": ResourceClaim " + m.claim() + " does not exist");
    }
    for (Step.MissingTemplate m : r.of(Step.MissingTemplate.class)) {
      why.add(
          "pod claim entry "
              + m.entry()
              + ": ResourceClaimTemplate "
              + m.template()
              + " does not exist");
    }
    return why;
  }
}
