package io.kdra.claimcontroller.reconciler;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kdra.claimcontroller.config.ClaimControllerConfig;
import io.kdra.claimcontroller.domain.CleanupPlan;
import io.kdra.claimcontroller.domain.Kdra;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.PodSource;
import io.kdra.claimcontroller.domain.TemplateClaims;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.domain.Upstream;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodGroups;
import io.kdra.claimcontroller.scheduling.ClaimTracer;
import io.kdra.events.EventRecorder;
import io.kdra.leadership.FencedWrite;
import io.kdra.leadership.Leadership;
import io.kdra.leadership.LeadershipRequeue;
import io.kdra.leadership.LeaseFence;
import io.kdra.leadership.SyncedInformers;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * Cleans up the claims this controller created or reserved (those annotated with its scheduler
 * name): removes pods that are gone or done from {@code reservedFor}, deallocates claims left
 * unreserved, and deletes generated claims whose pod will not run (see {@link CleanupPlan}). Pod
 * events are mapped to the claims that name, reserve or belong to the pod, so a pod's deletion
 * reaches its claims without a finalizer on the pod.
 *
 * <p>The operator SDK never dispatches a claim marked for deletion to a reconciler that has no
 * finalizer of its own, yet a claim deleted while in use is exactly one whose upstream finalizer
 * this controller must remove once its pods are gone: those go through {@link DeletingClaims}, with
 * the same {@link #release}.
 */
@ControllerConfiguration(name = "claim-cleanup", generationAwareEventProcessing = false)
public class ClaimReconciler implements Reconciler<ResourceClaim> {

  private static final Logger LOG = Logger.getLogger(ClaimReconciler.class);
  private static final Duration FENCED_RETRY = Duration.ofSeconds(1);

  @Inject ClaimControllerConfig config;
  @Inject ClaimWriter claimWriter;
  @Inject EventRecorder events;
  @Inject KubernetesClient client;
  @Inject ClaimTracer tracer;

  @Inject Leadership leadership;
  @Inject LeaseFence fence;
  @Inject SyncedInformers informers;

  @Inject SharedInformers shared;

  private volatile DeletingClaims deleting;

  @Override
  public List<EventSource<?, ResourceClaim>> prepareEventSources(
      EventSourceContext<ResourceClaim> ctx) {
    IndexerResourceCache<ResourceClaim> claims = ctx.getPrimaryCache();
    // This controller's claim informer is shared with the pod controller, and the pod
    // controller's pod informer with this one: each pod and claim is decoded once.
    Map<String, Function<ResourceClaim, List<String>>> indexers =
        new HashMap<>(InformerClusterView.claimIndexers());
    indexers.put(POD_UID, ClaimReconciler::podUids);
    claims.addIndexers(indexers);
    shared.claims().offer(claims);
    deleting =
        DeletingClaims.start(
            claims,
            this::isOurs,
            this::release,
            leadership::leading,
            shared.claims()::isSynced,
            DeletingClaims.SWEEP_INTERVAL);
    var podEvents =
        new PeerEventSource<>(
            Pod.class,
            shared.claims(),
            shared.pods(),
            (p, deleted) -> {
              Set<ResourceID> ids = claimsOf(claims, p);
              ids.forEach(id -> claims.get(id).ifPresent(deleting::offer));
              return ids;
            },
            ctx.getControllerConfiguration().getConfigurationService().cacheSyncTimeout());
    // a standby leaves our claims alone (reconcile): each is looked at again once it leads
    var onLeading =
        new LeadershipRequeue<ResourceClaim>(
            leadership, () -> claims.list(this::isOurs).map(ResourceID::fromResource));
    return List.of(podEvents, onLeading);
  }

  @PreDestroy
  void stop() {
    if (deleting != null) {
      deleting.close();
    }
  }

  /** Index of the claim cache: the UIDs of the pods that own a claim or that it reserves. */
  static final String POD_UID = "pod-uid";

  static List<String> podUids(ResourceClaim c) {
    List<String> uids = new ArrayList<>();
    TemplateClaims.owningPod(c).ifPresent(o -> uids.add(o.getUid()));
    if (c.getStatus() != null && c.getStatus().getReservedFor() != null) {
      c.getStatus().getReservedFor().forEach(r -> uids.add(r.getUid()));
    }
    return uids;
  }

  /**
   * Claims in the pod's namespace that reserve it, belong to it, or that it names: an index lookup
   * and one get per named claim, not a scan of the namespace's claims per pod event.
   */
  static Set<ResourceID> claimsOf(IndexerResourceCache<ResourceClaim> claims, Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    Set<ResourceID> ids = new HashSet<>();
    for (ResourceClaim c : claims.byIndex(POD_UID, pod.getMetadata().getUid())) {
      if (ns.equals(c.getMetadata().getNamespace())) {
        ids.add(ResourceID.fromResource(c));
      }
    }
    if (pod.getSpec() != null && pod.getSpec().getResourceClaims() != null) {
      pod.getSpec().getResourceClaims().stream()
          .map(e -> e.getResourceClaimName())
          .filter(n -> n != null)
          .map(n -> new ResourceID(n, ns))
          .filter(id -> claims.get(id).isPresent())
          .forEach(ids::add);
    }
    // a PodGroup's claim, which its members record: a member's event is the only one that
    // brings it back once the group is gone (this controller is told of no PodGroup event)
    if (pod.getStatus() != null && pod.getStatus().getResourceClaimStatuses() != null) {
      pod.getStatus().getResourceClaimStatuses().stream()
          .map(s -> s.getResourceClaimName())
          .filter(n -> n != null)
          .map(n -> new ResourceID(n, ns))
          .filter(id -> claims.get(id).filter(PodGroupClaims::isGroupsClaim).isPresent())
          .forEach(ids::add);
    }
    return ids;
  }

  @Override
  public UpdateControl<ResourceClaim> reconcile(
      ResourceClaim claim, Context<ResourceClaim> context) {
    if (!isOurs(claim)) {
      return UpdateControl.noUpdate();
    }
    if (!mayWrite()) {
      // a leader whose fence lags looks again soon; a standby leaves the claim alone until it
      // leads (LeadershipRequeue), or it would look at every claim of ours once a second
      return FencedWrite.next(leadership.leading()) == FencedWrite.RETRY_SOON
          ? UpdateControl.<ResourceClaim>noUpdate().rescheduleAfter(FENCED_RETRY)
          : UpdateControl.noUpdate();
    }
    release(claim);
    return UpdateControl.noUpdate();
  }

  /**
   * Applies the cleanup rules to {@code claim} (as cached) and records what changed; nothing while
   * this replica's Lease is not fresh.
   */
  void release(ResourceClaim claim) {
    if (!mayWrite()) {
      return;
    }
    // Claims are reconciled on every event of their pods: decided on the cached claim first, so
    // that only a claim with something to clean up is read from the API server (and decided
    // again on that read).
    if (CleanupPlan.of(claim, podSource()).isEmpty()) {
      return;
    }
    // The span is recorded afterwards, and only when something changed: no-op spans would
    // drown the claim's trace.
    Instant started = Instant.now();
    CleanupPlan plan;
    try {
      plan =
          claimWriter.cleanup(
              claim.getMetadata().getNamespace(), claim.getMetadata().getName(), podSource());
    } catch (RuntimeException e) {
      tracer.start(claim, "cleanup", started).end(e);
      throw e;
    }
    if (plan != null && !plan.isEmpty()) {
      tracer
          .start(
              claim,
              plan.delete() ? "delete" : plan.deallocate() ? "deallocate" : "unreserve",
              started)
          .attribute("removed", String.join(", ", plan.removed()))
          .end();
      LOG.debugf(
          "claim %s/%s: removed %s, deallocated %s, deleted %s",
          claim.getMetadata().getNamespace(),
          claim.getMetadata().getName(),
          plan.removed(),
          plan.deallocate(),
          plan.delete());
      if (plan.deallocate()) {
        events.normal(
            claim,
            "Deallocated",
            "no longer reserved by any pod (" + String.join(", ", plan.removed()) + ")");
      }
    }
  }

  /**
   * Claims this controller cleans up: those it created or reserved (annotated with its scheduler
   * name) and, in {@link TemplateMode#OWN} mode, where no kube-controller-manager releases claims,
   * also any claim that carries upstream's finalizer.
   */
  boolean isOurs(ResourceClaim claim) {
    var annotations = claim.getMetadata().getAnnotations();
    if (annotations != null
        && config.schedulerName().equals(annotations.get(Kdra.SCHEDULER_ANNOTATION))) {
      return true;
    }
    return config.templateMode() == TemplateMode.OWN
        && claim.getMetadata().getFinalizers() != null
        && claim.getMetadata().getFinalizers().contains(Upstream.FINALIZER);
  }

  /** As the pod-scheduler's: a fresh Lease, and every informer has listed. */
  private boolean mayWrite() {
    return informers.synced() && fence.mayWrite();
  }

  private PodSource podSource() {
    return podSource(shared.pods().cache(), shared.podGroups(), client);
  }

  /**
   * Pods from the informer, and from the API server when the informer does not have the pod: it may
   * not have seen a new pod yet, and a reservation must never be dropped on a guess. PodGroups
   * likewise from {@code groups}, the PodGroup informer's cache (null where none runs).
   */
  static PodSource podSource(
      Cache<Pod> pods, Cache<GenericKubernetesResource> groups, KubernetesClient client) {
    PodGroups read = PodGroupInformers.reads(groups, client);
    return new PodSource() {
      @Override
      public Optional<Pod> pod(String ns, String name) {
        Optional<Pod> cached = pods.get(new ResourceID(name, ns));
        if (cached.isPresent()) {
          return cached;
        }
        return Optional.ofNullable(client.pods().inNamespace(ns).withName(name).get());
      }

      @Override
      public boolean podGroupGone(String ns, String name, String uid) {
        return read.gone(ns, name, uid);
      }
    };
  }
}
