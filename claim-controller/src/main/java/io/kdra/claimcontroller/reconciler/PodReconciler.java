package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSIStorageCapacity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.PrimaryToSecondaryMapper;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kdra.claimcontroller.config.ClaimControllerConfig;
import io.kdra.claimcontroller.domain.Backoff;
import io.kdra.claimcontroller.domain.Pods;
import io.kdra.claimcontroller.domain.SchedulerFeatures;
import io.kdra.claimcontroller.domain.SearchDeadline;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodBinder;
import io.kdra.claimcontroller.k8s.PodGroups;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.claimcontroller.k8s.PreemptionWriter;
import io.kdra.claimcontroller.k8s.TaintEvictionWriter;
import io.kdra.claimcontroller.observability.SchedulingMetrics;
import io.kdra.claimcontroller.scheduling.ClaimTracer;
import io.kdra.claimcontroller.scheduling.ClusterView;
import io.kdra.claimcontroller.scheduling.DraCorePodAllocator;
import io.kdra.claimcontroller.scheduling.Outcome;
import io.kdra.claimcontroller.scheduling.OutcomeRecorder;
import io.kdra.claimcontroller.scheduling.PodAllocator;
import io.kdra.claimcontroller.scheduling.PodScheduling;
import io.kdra.claimcontroller.scheduling.Preemption;
import io.kdra.claimcontroller.scheduling.RecentWrites;
import io.kdra.claimcontroller.scheduling.UnansweredSettle;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.events.EventRecorder;
import io.kdra.leadership.FencedWrite;
import io.kdra.leadership.Leadership;
import io.kdra.leadership.LeadershipRequeue;
import io.kdra.leadership.LeaseFence;
import io.kdra.leadership.SyncedInformers;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;

/**
 * Schedules the pods that name this controller as their scheduler: dispatches each reconcile to
 * {@link PodScheduling}, hands its {@link Outcome} to {@link OutcomeRecorder} (condition, Events,
 * metric) and maps it to a requeue. Claims, templates, nodes, slices and classes are watched so
 * that a waiting or unschedulable pod is retried as soon as something it depends on changes;
 * backoff bounds the retries in between.
 */
@ControllerConfiguration(name = "pod-scheduler", generationAwareEventProcessing = false)
public class PodReconciler implements Reconciler<Pod> {

  private static final Logger LOG = Logger.getLogger(PodReconciler.class);

  @Inject ClaimControllerConfig config;
  @Inject RecentWrites recent;
  @Inject ClaimWriter claimWriter;
  @Inject PodWriter podWriter;
  @Inject PodBinder binder;
  @Inject EventRecorder events;
  @Inject PodAllocator allocator;
  @Inject SchedulerFeatures schedulerFeatures;
  @Inject SchedulingMetrics metrics;
  @Inject ClaimTracer tracer;
  @Inject LeaseFence fence;
  @Inject Leadership leadership;
  @Inject SyncedInformers informers;
  @Inject SharedInformers shared;
  @Inject TaintEvictionWriter evictionWriter;
  @Inject PreemptionWriter preemptionWriter;
  @Inject AllocatorFeatures allocatorFeatures;
  @Inject java.time.Clock clock;

  private volatile PodScheduling scheduling;
  private volatile OutcomeRecorder recorder;
  private volatile IndexerResourceCache<Pod> podCache;
  private volatile PodTriggers triggers;
  private volatile Preemption preemption;
  private volatile PodRetries retries;

  /**
   * Failed attempts per pod UID, for the backoff. The operator SDK does not dispatch a deleted pod
   * to a reconciler without a finalizer, so entries of pods that are gone are dropped whenever a
   * new one is added ({@link #countAttempt}).
   */
  private final Map<String, Integer> attempts = new ConcurrentHashMap<>();

  /**
   * UIDs of the pods of {@link #attempts} whose device search ran out of time once: their later
   * searches run off the scheduling lock ({@code SearchSite}), until the pod is bound or gone.
   */
  private final Set<String> searchedOut = ConcurrentHashMap.newKeySet();

  /**
   * UIDs of the pods whose reconcile runs now. The operator SDK runs one reconcile at a time per
   * namespace/name only, and not even that for a pod re-created under a deleted one's name: the old
   * reconcile's end clears the new pod's flag, so a second reconcile of the new pod may start while
   * its first runs, and both would create a claim for the same template entry.
   */
  private final Set<String> reconciling = ConcurrentHashMap.newKeySet();

  @Override
  public List<EventSource<?, Pod>> prepareEventSources(EventSourceContext<Pod> ctx) {
    IndexerResourceCache<Pod> pods = ctx.getPrimaryCache();
    podCache = pods;
    pods.addIndexers(PodTriggers.podIndexers());
    PodTriggers wake = new PodTriggers(pods);
    triggers = wake;
    String scheduler = config.schedulerName();
    // Each source maps its events to pods and keeps no pod-to-secondary index: nothing reads it
    // (the scheduler reads the informers' caches), and for sources mapped to many pods it grew
    // with every event until the heap ran out.
    // The claims are the cleanup controller's primary informer, shared (its cache holds the
    // indexes this controller reads): each claim is decoded once.
    shared.pods().offer(pods);
    var claims =
        new PeerEventSource<>(
            ResourceClaim.class,
            shared.pods(),
            shared.claims(),
            (c, deleted) -> {
              if (deleted) {
                wake.deleting(c);
              }
              return wake.forClaim(c);
            },
            ctx.getControllerConfiguration().getConfigurationService().cacheSyncTimeout());
    var templates =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(ResourceClaimTemplate.class, Pod.class)
                .withSecondaryToPrimaryMapper(
                    t -> PodTriggers.pending(pods, scheduler, t.getMetadata().getNamespace()))
                .withPrimaryToSecondaryMapper(NO_INDEX)
                .build(),
            ctx);
    var nodes =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(Node.class, Pod.class)
                .withSecondaryToPrimaryMapper(n -> wake.forClusterChange())
                .withPrimaryToSecondaryMapper(NO_INDEX)
                .build(),
            ctx);
    var slices =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(ResourceSlice.class, Pod.class)
                .withSecondaryToPrimaryMapper(s -> wake.forClusterChange())
                .withPrimaryToSecondaryMapper(NO_INDEX)
                .build(),
            ctx);
    slices.addIndexers(InformerClusterView.sliceIndexers());
    var classes =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(DeviceClass.class, Pod.class)
                .withSecondaryToPrimaryMapper(c -> wake.forClusterChange())
                .withPrimaryToSecondaryMapper(NO_INDEX)
                .build(),
            ctx);
    // namespace labels, for pod affinity terms with a namespaceSelector (a label change can make
    // an unschedulable pod fit, as upstream's queueing hint for namespaces says)
    var namespaces =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(Namespace.class, Pod.class)
                .withSecondaryToPrimaryMapper(n -> wake.forClusterChange())
                .withPrimaryToSecondaryMapper(NO_INDEX)
                .build(),
            ctx);
    // DeviceTaintRules (v1 from 1.37 on): watched only where the API server serves them, since an
    // informer on a resource it does not serve would never sync
    var taintRules = TaintRuleInformers.served(ctx.getClient()) ? eventSource(ctx, wake) : null;
    // PodGroups (Kubernetes 1.37's Workload API), likewise only where served
    var podGroups =
        PodGroupInformers.served(ctx.getClient())
            ? PodGroupInformers.eventSource(ctx, wake, config.templateMode())
            : null;
    var storage = storageSources(ctx, wake);
    var departures = new PlacedPodDepartures(shared.pods(), wake::forPodChange);
    var view =
        new InformerClusterView(
            pods,
            shared.pods(),
            shared.claims(),
            templates,
            nodes,
            slices,
            classes,
            namespaces,
            taintRules,
            storage);
    scheduling =
        new PodScheduling(
            view,
            recent,
            new PodScheduling.Writers(claimWriter, podWriter, binder, events),
            allocator,
            PodScheduling.Settings.of(config.templateMode(), tracer)
                .fencedBy(this::mayWrite)
                .searchLimitedBy(deadline(), System::nanoTime));
    preemption = preemption(ctx.getClient(), view);
    startUnansweredSettle(
        new UnansweredSettle(recent, claimWriter, this::mayWrite, metrics::unansweredAllocation),
        config.retry().settleInterval());
    // pods naming a PodGroup (Kubernetes 1.37's Workload API) are placed with their gang, and
    // a gang is preempted whole
    PodGroups podGroupsRead = PodGroupInformers.reads(podGroups, ctx.getClient());
    shared.offerPodGroups(podGroups);
    scheduling.placeGangsWith(podGroupsRead, schedulerFeatures);
    preemption.placeGangsWith(podGroupsRead, scheduling::releaseGroupClaim);
    recorder = new OutcomeRecorder(view, podWriter, events, metrics::failure);
    if (config.templateMode() == TemplateMode.OWN && config.deviceTaintEviction().enabled()) {
      // no pass reads the informers before they have started (their caches do not exist yet)
      startTaintEviction(
          new TaintEvictor(view, evictionWriter, events, () -> view.synced() && mayWrite(), clock));
    }
    metrics.pendingPods(() -> PodTriggers.pending(pods, scheduler, null).size());
    var podRetries = new PodRetries(pods::get);
    retries = podRetries;
    // a standby leaves its pending pods alone (awaitsLeadership): each is tried once it leads
    var onLeading =
        new LeadershipRequeue<Pod>(
            leadership, () -> PodTriggers.pending(pods, scheduler, null).stream());
    List<EventSource<?, Pod>> sources =
        new java.util.ArrayList<>(
            List.of(
                claims,
                templates,
                nodes,
                slices,
                classes,
                namespaces,
                departures,
                podRetries,
                onLeading));
    sources.addAll(storage.all());
    if (taintRules != null) {
      sources.add(taintRules);
    }
    if (podGroups != null) {
      sources.add(podGroups);
    }
    return sources;
  }

  /**
   * The volume filters' objects. A PersistentVolumeClaim's event wakes the pending pods whose
   * volumes use it (a claim created, bound or deleted); a PersistentVolume's, StorageClass's,
   * CSINode's, CSIDriver's or CSIStorageCapacity's wakes those that did not fit anywhere, as
   * upstream's volume plugins register them.
   */
  private static InformerClusterView.Storage storageSources(
      EventSourceContext<Pod> ctx, PodTriggers wake) {
    return new InformerClusterView.Storage(
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(PersistentVolumeClaim.class, Pod.class)
                .withSecondaryToPrimaryMapper(wake::forVolumeClaim)
                .withPrimaryToSecondaryMapper(NO_INDEX)
                .build(),
            ctx),
        clusterChange(PersistentVolume.class, ctx, wake),
        clusterChange(StorageClass.class, ctx, wake),
        clusterChange(CSINode.class, ctx, wake),
        clusterChange(CSIDriver.class, ctx, wake),
        clusterChange(CSIStorageCapacity.class, ctx, wake));
  }

  /** An informer on {@code kind} whose every event wakes the pods that did not fit anywhere. */
  private static <R extends io.fabric8.kubernetes.api.model.HasMetadata>
      InformerEventSource<R, Pod> clusterChange(
          Class<R> kind, EventSourceContext<Pod> ctx, PodTriggers wake) {
    return new InformerEventSource<>(
        InformerEventSourceConfiguration.from(kind, Pod.class)
            .withSecondaryToPrimaryMapper(r -> wake.forClusterChange())
            .withPrimaryToSecondaryMapper(NO_INDEX)
            .build(),
        ctx);
  }

  /** Runs the evictor's passes on a daemon thread of its own, from now until the process ends. */
  private static void startTaintEviction(TaintEvictor evictor) {
    var executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "device-taint-eviction");
              t.setDaemon(true);
              return t;
            });
    long tick = TaintEvictor.TICK.toMillis();
    executor.scheduleWithFixedDelay(evictor::pass, tick, tick, TimeUnit.MILLISECONDS);
  }

  /**
   * Runs the settle's passes on a daemon thread of its own, from now until the process ends; they
   * act on the leader only (each asks {@link #mayWrite}).
   */
  private static void startUnansweredSettle(UnansweredSettle settle, Duration interval) {
    var executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "unanswered-settle");
              t.setDaemon(true);
              return t;
            });
    long every = interval.toMillis();
    executor.scheduleWithFixedDelay(
        () -> {
          try {
            settle.pass();
          } catch (RuntimeException e) {
            // a failed pass must not end the schedule: the next one looks again
            LOG.warnf("settling unanswered allocations failed: %s", e.toString());
          }
        },
        every,
        every,
        TimeUnit.MILLISECONDS);
  }

  /** A rule's change may free or block devices: every waiting pod is tried again. */
  private static InformerEventSource<DeviceTaintRule, Pod> eventSource(
      EventSourceContext<Pod> ctx, PodTriggers wake) {
    return new InformerEventSource<>(
        InformerEventSourceConfiguration.from(DeviceTaintRule.class, Pod.class)
            .withSecondaryToPrimaryMapper(r -> wake.forClusterChange())
            .withPrimaryToSecondaryMapper(NO_INDEX)
            .build(),
        ctx);
  }

  /**
   * Writes wait for a fresh Lease and for every informer to have listed (see {@link
   * SyncedInformers}).
   */
  private boolean mayWrite() {
    return informers.synced() && fence.mayWrite();
  }

  /**
   * Preemption, simulated on the dra-core allocator with the scheduler's features;
   * PodDisruptionBudgets are listed only when a search needs them, which is rare.
   */
  private Preemption preemption(KubernetesClient client, ClusterView view) {
    DraCorePodAllocator dra =
        new DraCorePodAllocator(
            AllocatorOptions.defaults(allocatorFeatures, () -> UUID.randomUUID().toString()));
    return new Preemption(
        view,
        scheduling.nominations(),
        preemptionWriter,
        events,
        claims -> dra.allocator(claims, view),
        () -> client.resources(PodDisruptionBudget.class).inAnyNamespace().list().getItems(),
        config.templateMode(),
        config.schedulerName(),
        this::mayWrite);
  }

  private SearchDeadline deadline() {
    return new SearchDeadline(
        config.allocator().searchDeadline(), config.allocator().maxSearchDeadline());
  }

  /** No secondary resources are read through the context: see {@link #prepareEventSources}. */
  private static final PrimaryToSecondaryMapper<Pod> NO_INDEX = p -> Set.of();

  private int countAttempt(String uid) {
    if (!attempts.containsKey(uid)) {
      Set<String> live =
          podCache
              .list(p -> attempts.containsKey(p.getMetadata().getUid()))
              .map(p -> p.getMetadata().getUid())
              .collect(Collectors.toSet());
      attempts.keySet().retainAll(live);
      searchedOut.retainAll(live);
    }
    return attempts.merge(uid, 1, Integer::sum);
  }

  /** Drops the pod's backoff state. */
  private void forget(String uid) {
    attempts.remove(uid);
    searchedOut.remove(uid);
  }

  /**
   * Whether a pod whose attempt ended in {@code outcome} waits for this replica to lead instead of
   * being retried: its write was fenced while another replica leads ({@link FencedWrite}).
   */
  static boolean awaitsLeadership(Outcome outcome, boolean leading) {
    return PodScheduling.fenced(outcome)
        && FencedWrite.next(leading) == FencedWrite.AWAIT_LEADERSHIP;
  }

  /** Whether backoff state is held for the pod with this UID. */
  boolean holdsBackoffFor(String uid) {
    return attempts.containsKey(uid);
  }

  /** Whether an attempt of the pod with this UID runs now. */
  boolean attemptRunningFor(String uid) {
    return reconciling.contains(uid);
  }

  /** Whether a retry of the pod with this UID is pending. */
  boolean retryPendingFor(String uid) {
    return retries.pendingFor(uid);
  }

  @Override
  public UpdateControl<Pod> reconcile(Pod pod, Context<Pod> context) {
    String uid = pod.getMetadata().getUid();
    if (!Pods.isScheduledBy(pod, config.schedulerName())
        || Pods.isDone(pod)
        || pod.getMetadata().getDeletionTimestamp() != null) {
      forget(uid);
      retries.forget(pod);
      return UpdateControl.noUpdate();
    }
    if (!reconciling.add(uid)) {
      // another reconcile of this pod runs: tried again once it has likely ended, not dropped
      retries.after(pod, config.retry().initialBackoff());
      return UpdateControl.noUpdate();
    }
    try {
      return reconcileOwn(pod, uid);
    } finally {
      reconciling.remove(uid);
    }
  }

  /** One scheduling attempt, preemption after it, and its outcome recorded on the pod. */
  private Outcome attempt(Pod pod, String uid) {
    int thisAttempt = attempts.getOrDefault(uid, 0) + 1;
    boolean ranOut = searchedOut.contains(uid);
    Outcome outcome = metrics.timeScheduling(() -> scheduling.schedule(pod, thisAttempt, ranOut));
    if (outcome instanceof Outcome.Unschedulable u && preemption != null) {
      outcome = preemption.afterUnschedulable(pod, u);
    } else if (outcome instanceof Outcome.Bound && preemption != null) {
      preemption.placed(uid);
    }
    LOG.debugf("pod %s: %s", Pods.key(pod), outcome);
    recorder.record(pod, outcome);
    return outcome;
  }

  /**
   * An attempt whose API call failed is retried with backoff through {@link PodRetries}, like an
   * unschedulable pod, not handed to the operator SDK: its error retry is keyed by namespace/name
   * and shared with a deleted pod of the same name, whose reconcile's end takes it along. A
   * conflict or a vanished object is a routine race (DEBUG); anything else is worth a WARN.
   */
  private UpdateControl<Pod> failed(Pod pod, String uid, KubernetesClientException e) {
    Backoff backoff = new Backoff(config.retry().initialBackoff(), config.retry().maxBackoff());
    Duration delay = backoff.delay(countAttempt(uid));
    if (e.getCode() == 404 || e.getCode() == 409) {
      LOG.debugf(
          "pod %s: attempt failed (%s); retrying in %s", Pods.key(pod), e.getMessage(), delay);
    } else {
      LOG.warnf(
          "pod %s: attempt failed (%s); retrying in %s", Pods.key(pod), e.getMessage(), delay);
    }
    retries.after(pod, delay);
    return UpdateControl.noUpdate();
  }

  /** A pod of this scheduler, neither done nor deleting, whose UID no other reconcile holds. */
  private UpdateControl<Pod> reconcileOwn(Pod pod, String uid) {
    if (Pods.isBound(pod)) {
      forget(uid);
      retries.forget(pod);
      if (!Pods.claimEntries(pod).isEmpty()) {
        scheduling.reserveForBoundPod(pod);
      }
      if (preemption != null) {
        preemption.memberBound(pod);
      }
      return UpdateControl.noUpdate();
    }
    Outcome outcome;
    try {
      outcome = attempt(pod, uid);
    } catch (KubernetesClientException e) {
      return failed(pod, uid, e);
    }
    // a search that ran out of time is retried by backoff alone, as upstream retries a filter
    // timeout: woken by every cluster change, it would take the lock again at each
    triggers.attempted(pod, outcome instanceof Outcome.Unschedulable u && !u.timedOut());
    if (outcome instanceof Outcome.Bound) {
      forget(uid);
      retries.forget(pod);
      return UpdateControl.noUpdate();
    }
    if (outcome instanceof Outcome.Waiting) {
      return UpdateControl.noUpdate();
    }
    if (awaitsLeadership(outcome, leadership.leading())) {
      // another replica leads: a retry would cost this one an attempt per pod and second, and
      // write nothing; the LeadershipRequeue brings the pod back if this replica leads
      retries.forget(pod);
      return UpdateControl.noUpdate();
    }
    // Retried through PodRetries, keyed by UID, not rescheduleAfter: see there.
    Backoff backoff = new Backoff(config.retry().initialBackoff(), config.retry().maxBackoff());
    int attempt = countAttempt(uid);
    if (outcome instanceof Outcome.Unschedulable u) {
      if (u.timedOut()) {
        searchedOut.add(uid);
      }
      retries.after(
          pod, u.timedOut() ? deadline().retryDelay(backoff, attempt) : backoff.delay(attempt));
    } else {
      // Retry: a claim changed under the decision; the next attempt sees the change.
      String reason = outcome instanceof Outcome.Retry r ? r.reason() : outcome.toString();
      metrics.retry();
      if (RetryStreak.worthInfo(attempt)) {
        LOG.infof("pod %s: attempt %d retried again: %s", Pods.key(pod), attempt, reason);
      } else {
        LOG.debugf("pod %s: attempt %d retried: %s", Pods.key(pod), attempt, reason);
      }
      retries.after(pod, config.retry().initialBackoff());
    }
    return UpdateControl.noUpdate();
  }
}
