package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.claimcontroller.domain.PodClaimResolver;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.SchedulerFeatures;
import io.kdra.claimcontroller.domain.SearchDeadline;
import io.kdra.claimcontroller.domain.SearchSite;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.ExtendedClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodGroups;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.events.EventRecorder;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * One scheduling attempt for one pod, the phases in kube-scheduler's order, each a class of its
 * own: the pod's claims from templates ({@link TemplateClaimController}, own mode), {@link
 * PreEnqueue}, {@link PreFilter} ({@link ExtendedPreFilter} for extended resources), then, under
 * one lock, the {@link SchedulingCycle} ({@link Filter}, {@link Score}, the allocation, {@link
 * Reserve}; for a pod whose search ran out before, the search runs off the lock: {@link
 * OffLockSearch}), and outside it the {@link BindingCycle} ({@link PreBind}, Bind). A member of a
 * PodGroup with a gang policy is placed with its group ({@link GangScheduling}). What the phases
 * read beyond the pod is the {@link DraManager}'s. Decisions come from the domain package and the
 * {@link PodAllocator}; writes go through the k8s adapters.
 *
 * <p>Thread-safety: attempts of different pods run concurrently up to the scheduling cycle, which
 * decides one pod at a time and ends by reserving its devices and node, so that two pods never get
 * the same device from this process; the binding cycles run outside the lock, several at once, and
 * a failed one gives back what it reserved. Two processes never schedule at once: only the elected
 * leader runs, and each write asks first whether this replica's Lease is fresh.
 */
public final class PodScheduling {

  /** Not this replica's turn to write: its Lease is held by another or not renewed lately. */
  public static final Outcome FENCED =
      new Outcome.Retry(
          "this replica's Lease is not fresh; not "
              + "writing until it is renewed or another replica leads");

  /** Whether {@code outcome} is an attempt that stopped at the Lease fence ({@link #FENCED}). */
  public static boolean fenced(Outcome outcome) {
    return outcome == FENCED;
  }

  /**
   * The limits {@link Settings#of} sets (the service's defaults, see {@code
   * ClaimControllerConfig}); with its clock standing still they never run out.
   */
  private static final SearchDeadline UNTIMED_DEADLINE =
      new SearchDeadline(Duration.ofSeconds(1), Duration.ofSeconds(10));

  private final DraManager dra;
  private final BooleanSupplier mayWrite;
  private final TemplateClaimController templates;
  private final BoundPodClaims boundPods;
  private final ExtendedPreFilter extendedPreFilter;
  private final SchedulingCycle cycle;
  private final OffLockSearch offLock;
  private final BindingCycle binding;
  private final ClaimWriter claims;

  /** What preemptors were promised: kept from pods of no higher priority ({@link Preemption}). */
  private final Nominations nominations = new Nominations();

  /** Gangs (PodGroups) placed whole; see {@link #placeGangsWith}. */
  private volatile GangScheduling gangs;

  /** Where the PodGroups are read; set with {@link #gangs}. */
  private volatile PodGroups groups = PodGroups.NONE;

  /** Which of a PodGroup's fields count; set with {@link #placeGangsWith}. */
  private volatile SchedulerFeatures features = SchedulerFeatures.defaults();

  /**
   * The adapters an attempt writes through.
   *
   * @param claims ResourceClaims (creation from templates, allocation, reservation)
   * @param pods the pods' status (the claims made for them)
   * @param binder the bindings
   * @param events the pods' events
   */
  public record Writers(
      ClaimWriter claims, PodWriter pods, PodBinder binder, EventRecorder events) {}

  /**
   * How attempts run.
   *
   * @param mode who makes claims from templates
   * @param tracer the attempts' spans
   * @param mayWrite whether this replica may write (its Lease is fresh: see {@code
   *     io.kdra.leadership.LeaseFence}); checked before claims are created and again, under the
   *     lock, before allocations are written
   * @param deadline each attempt's device search limit, read on {@code nanoClock}
   * @param nanoClock {@link System#nanoTime} in production
   */
  public record Settings(
      TemplateMode mode,
      ClaimTracer tracer,
      BooleanSupplier mayWrite,
      SearchDeadline deadline,
      LongSupplier nanoClock) {

    /**
     * Always writing, with the service's default search limits on a clock standing still, so that
     * the device search is bounded by the allocator's step budget alone.
     */
    public static Settings of(TemplateMode mode, ClaimTracer tracer) {
      return new Settings(mode, tracer, () -> true, UNTIMED_DEADLINE, () -> 0L);
    }

    /** These settings, writing only while {@code mayWrite}. */
    public Settings fencedBy(BooleanSupplier mayWrite) {
      return new Settings(mode, tracer, mayWrite, deadline, nanoClock);
    }

    /** These settings, each device search limited by {@code deadline} on {@code nanoClock}. */
    public Settings searchLimitedBy(SearchDeadline deadline, LongSupplier nanoClock) {
      return new Settings(mode, tracer, mayWrite, deadline, nanoClock);
    }
  }

  public PodScheduling(
      ClusterView view,
      RecentWrites recent,
      Writers writers,
      PodAllocator allocator,
      Settings settings) {
    this.mayWrite = settings.mayWrite();
    this.claims = writers.claims();
    this.dra = new DraManager(view, recent);
    this.templates = new TemplateClaimController(dra, writers, settings);
    this.boundPods = new BoundPodClaims(dra, templates, writers.claims(), this::groupOf, mayWrite);
    this.extendedPreFilter = new ExtendedPreFilter(dra, ExtendedClaimWriter.of(writers.claims()));
    AllocatableCache allocatable = new AllocatableCache();
    Reserve reserve = new Reserve(dra);
    this.cycle =
        new SchedulingCycle(
            dra,
            new Filter(
                dra,
                nominations,
                allocatable,
                allocator,
                settings.deadline(),
                settings.nanoClock()),
            new Score(dra, allocatable),
            reserve,
            settings.tracer());
    this.offLock = new OffLockSearch(cycle, allocator, view, settings);
    this.binding = new BindingCycle(dra, reserve, writers, settings);
  }

  /** The promises of preemptors, which every decision respects. */
  public Nominations nominations() {
    return nominations;
  }

  /**
   * Places members of a PodGroup whole ({@link GangScheduling}); pods of no group, or of one whose
   * API the server does not serve, are scheduled alone as before. {@code features} say which of a
   * group's fields count, as kube-scheduler's gates do ({@link PodGroupPolicy#scheduledWith}).
   */
  public void placeGangsWith(PodGroups groups, SchedulerFeatures features) {
    this.groups = groups;
    this.features = features;
    templates.recordGroupClaimsIn(groups);
    this.gangs = new GangScheduling(cycle, binding, templates, dra, mayWrite);
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
    return schedule(pod, attempt, false);
  }

  /**
   * Schedules a pending pod, whose attempt number this is; {@code searchedOutBefore}: whether an
   * earlier attempt's device search ran out of time ({@link SearchSite}).
   */
  public Outcome schedule(Pod pod, int attempt, boolean searchedOutBefore) {
    if (!mayWrite.getAsBoolean()) {
      return FENCED; // not even the search: another replica leads
    }
    Optional<PodGroupPolicy> policy = groupOf(pod);
    Optional<Outcome> noGroup =
        gangs == null ? Optional.empty() : GangScheduling.missing(pod, policy);
    if (noGroup.isPresent()) {
      // before any claim is made: which of its entries are the group's own is not known yet
      return noGroup.get();
    }
    PodGroupClaims group = policy.map(PodGroupPolicy::claims).orElse(null);
    Optional<PodClaimResolver.Resolution> ensured;
    try {
      ensured = templates.ensure(pod, group);
    } catch (ApiRefusal refused) {
      return new Outcome.Unschedulable(refused.getMessage(), Map.of(), "ClaimRefused");
    }
    if (ensured.isEmpty()) {
      return FENCED;
    }
    PodClaimResolver.Resolution r = ensured.get();
    Optional<Outcome> notNow =
        PreEnqueue.check(pod, r).or(() -> PreFilter.refusal(pod, dra.view()));
    if (notNow.isPresent()) {
      return notNow.get();
    }
    GangScheduling gang = gangs;
    Optional<Outcome> asMember =
        gang == null ? Optional.empty() : gang.schedule(pod, attempt, policy);
    if (asMember.isPresent()) {
      return asMember.get();
    }
    ExtendedPreFilter.Result extended =
        extendedPreFilter.apply(PreFilter.state(pod, r, group, dra.view()));
    if (extended.stop() != null) {
      return extended.stop();
    }
    CycleState state = extended.state();
    Decided decided;
    if (SearchSite.of(searchedOutBefore, !state.unallocated().isEmpty(), servedByClass(state))
        == SearchSite.OFF_LOCK) {
      decided = offLock.decide(state, attempt);
    } else {
      synchronized (cycle.lock()) {
        if (!mayWrite.getAsBoolean()) {
          return FENCED;
        }
        decided = cycle.decide(state, null, attempt);
      }
    }
    if (decided instanceof Decided.NotPlaced no) {
      return no.outcome();
    }
    if (decided instanceof Decided.Unexplained u) {
      return u.explain(); // outside the lock
    }
    return binding.run(state, (Decided.Placement) decided);
  }

  /**
   * What this pod's attempt would decide for its PodGroup now, writing nothing and holding nothing
   * once it returns ({@link GangWhatIf}): the claims are resolved, never created, and the gang pass
   * that {@link #schedule} would run gives back every placement it keeps. Empty for a pod scheduled
   * alone (no group, a group that places its pods one by one) or while gangs are not placed. The
   * gang differential test compares it with kube-scheduler's pod group cycle.
   */
  public Optional<GangWhatIf> whatIfGang(Pod pod) {
    GangScheduling gang = gangs;
    if (gang == null) {
      return Optional.empty();
    }
    Optional<PodGroupPolicy> policy = groupOf(pod);
    Optional<Outcome> noGroup = GangScheduling.missing(pod, policy);
    if (noGroup.isPresent()) {
      return Optional.of(GangWhatIf.refused(noGroup.get()));
    }
    PodGroupClaims group = policy.map(PodGroupPolicy::claims).orElse(null);
    PodClaimResolver.Resolution r = templates.resolve(pod, group);
    Optional<Outcome> notNow =
        PreEnqueue.check(pod, r).or(() -> PreFilter.refusal(pod, dra.view()));
    if (notNow.isPresent()) {
      return Optional.of(GangWhatIf.refused(notNow.get()));
    }
    return gang.whatIf(pod, policy);
  }

  /**
   * For a pod bound without this controller (spec.nodeName set by its creator): reserve its
   * allocated claims for it ({@link BoundPodClaims}).
   */
  public void reserveForBoundPod(Pod pod) {
    boundPods.reserve(pod);
  }

  /**
   * Frees {@code claim}, reserved for PodGroup {@code group} alone, whose members preemption
   * evicted ({@link Preemption}): under the scheduling lock, and only while no pod of the group is
   * placed or being bound (a pass of the group's new pods may use the claim). Returns whether it
   * was freed.
   */
  public boolean releaseGroupClaim(ResourceClaim claim, String group) {
    String ns = claim.getMetadata().getNamespace();
    synchronized (cycle.lock()) {
      if (!mayWrite.getAsBoolean()) {
        return false;
      }
      boolean inUse =
          dra.view().pods().stream()
              .filter(p -> ns.equals(p.getMetadata().getNamespace()))
              .filter(p -> Optional.of(group).equals(PodGroupPolicy.groupOf(p)))
              .anyMatch(
                  p ->
                      (Pods.isBound(p) && !Pods.isTerminal(p))
                          || dra.recent().isBinding(p.getMetadata().getUid()));
      if (inUse) {
        return false;
      }
      return claims.releaseForGroup(
          ns, claim.getMetadata().getName(), claim.getStatus().getReservedFor().get(0).getUid());
    }
  }

  /** Whether the pod's extended resources are served by a DeviceClass (a special claim). */
  private static boolean servedByClass(CycleState s) {
    return s.extended() != null && s.extended().served();
  }

  /** The PodGroup the pod names, read once per attempt; empty without one or without gangs. */
  private Optional<PodGroupPolicy> groupOf(Pod pod) {
    GangScheduling gang = gangs;
    Optional<String> name = PodGroupPolicy.groupOf(pod);
    if (gang == null || name.isEmpty()) {
      return Optional.empty();
    }
    return groups
        .get(pod.getMetadata().getNamespace(), name.get())
        .map(group -> group.scheduledWith(features));
  }
}
