package io.kdra.claimcontroller.k8s;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.claimcontroller.domain.CleanupPlan;
import io.kdra.claimcontroller.domain.Kdra;
import io.kdra.claimcontroller.domain.PodGroupClaims;
import io.kdra.claimcontroller.domain.PodSource;
import io.kdra.claimcontroller.domain.Reservation;
import io.kdra.claimcontroller.domain.Upstream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Every write this controller makes to ResourceClaims. Each method re-reads the claim from the API
 * server, decides with a pure rule from the domain package, and writes with the read {@code
 * resourceVersion}, so that a concurrent writer (another replica, kube-scheduler,
 * kube-controller-manager, a driver) makes the write fail with 409 instead of being overwritten; on
 * 409 the cycle repeats, up to the configured number of retries.
 */
public class ClaimWriter {

  private final KubernetesClient client;
  private final String schedulerName;
  private final int conflictRetries;

  /** Why {@link #reserve} stopped when {@link StatusWrites#mayWrite} said no. */
  public static final String NOT_WRITING =
      "this replica may no longer write (its Lease is not fresh)";

  public ClaimWriter(KubernetesClient client, String schedulerName, int conflictRetries) {
    this.client = client;
    this.schedulerName = schedulerName;
    this.conflictRetries = conflictRetries;
  }

  /** A writer of PersistentVolumeClaims on the same client (the volume binding's PreBind). */
  public VolumeClaimWriter volumeClaims() {
    return new VolumeClaimWriter(client);
  }

  /**
   * Creates a claim (generateName), marked as this controller's and carrying {@code annotations}
   * (the trace context) and upstream's finalizer; returns it as stored.
   *
   * <p>The finalizer is there from the start, where upstream's scheduler adds it when it allocates:
   * that saves a write per pod (the claim is created to be allocated at once), and the cleanup
   * removes it from a claim deleted unallocated as from one deleted allocated ({@link
   * CleanupPlan}).
   */
  public ResourceClaim create(ResourceClaim desired, Map<String, String> annotations) {
    ResourceClaim marked =
        new ResourceClaimBuilder(desired)
            .editMetadata()
            .addToAnnotations(annotations)
            .addToAnnotations(Kdra.SCHEDULER_ANNOTATION, schedulerName)
            .addToFinalizers(Upstream.FINALIZER)
            .endMetadata()
            .build();
    return client.resource(marked).create();
  }

  /**
   * Reserves claim {@code namespace/name} for {@code pod}, writing {@code allocation} first (see
   * {@link Reservation#decide}).
   *
   * @return the step taken: {@link Reservation.Step.Write} or {@link Reservation.Step.Done} on
   *     success, {@link Reservation.Step.Stale} or {@link Reservation.Step.Refused} when nothing
   *     was written
   */
  public Reservation.Step reserve(
      String namespace,
      String name,
      Pod pod,
      AllocationResult allocation,
      Map<String, String> annotations) {
    return reserve(
        namespace,
        name,
        null,
        PodGroupClaims.podConsumer(pod),
        allocation,
        null,
        annotations,
        StatusWrites.NONE);
  }

  /**
   * Reserves claim {@code namespace/name}, allocated as {@code relied} (what the caller saw), for
   * {@code pod}, deciding first on {@code cached} (the informer's copy, or null) instead of reading
   * the claim: on the usual path the informer is current and the read is saved. Its {@code
   * resourceVersion} guards the writes as a read's would; a conflict, or a decision other than a
   * write, is decided again on a fresh read, so a stale copy never decides alone.
   */
  public Reservation.Step reserveAllocated(
      String namespace, String name, ResourceClaim cached, Pod pod, AllocationResult relied) {
    return reserve(
        namespace,
        name,
        cached,
        PodGroupClaims.podConsumer(pod),
        null,
        relied,
        Map.of(),
        StatusWrites.NONE);
  }

  /**
   * Told of each status write {@link #reserve} sends, so that an allocation can be assumed until
   * the informer shows the version that tells whether it was stored; and asked right before each
   * write whether it may still go out.
   */
  public interface StatusWrites {
    StatusWrites NONE =
        new StatusWrites() {
          @Override
          public void sending(String resourceVersion) {}

          @Override
          public void stored(String resourceVersion) {}
        };

    /**
     * Whether a write may go out now (this replica's Lease is still fresh); asked right before each
     * one, since the decision it carries may be older than the Lease. False: nothing more is
     * written and {@link #reserve} answers {@link Reservation.Step.Stale}.
     */
    default boolean mayWrite() {
      return true;
    }

    /** A write conditioned on {@code resourceVersion} goes out; it may land without an answer. */
    void sending(String resourceVersion);

    /** It was stored as {@code resourceVersion}. */
    void stored(String resourceVersion);
  }

  /**
   * Reserves claim {@code namespace/name} for {@code consumer} (the pod, or its PodGroup for a
   * claim its members share), deciding first on {@code cached} as {@link #reserveAllocated} does:
   * writing {@code allocation} first when non-null, otherwise only where the claim is still
   * allocated as {@code relied} (see {@link Reservation#decide}); telling {@code writes} of each
   * status write.
   */
  public Reservation.Step reserve(
      String namespace,
      String name,
      ResourceClaim cached,
      ResourceClaimConsumerReference consumer,
      AllocationResult allocation,
      AllocationResult relied,
      Map<String, String> annotations,
      StatusWrites writes) {
    Map<String, String> wanted = marked(annotations);
    return reserveAs(
        namespace,
        name,
        cached,
        current -> Reservation.decide(current, consumer, allocation, relied, wanted),
        writes);
  }

  /**
   * Reserves claim {@code namespace/name} for {@code consumer}, whose allocation {@code unanswered}
   * this controller sent before without an answer: sent again where the claim still lacks it, only
   * reserved where it landed ({@link Reservation#decideUnanswered}); {@code shownFrom} is the first
   * version of the claim that tells whether it landed.
   */
  public Reservation.Step reserveUnanswered(
      String namespace,
      String name,
      ResourceClaim cached,
      ResourceClaimConsumerReference consumer,
      AllocationResult unanswered,
      long shownFrom,
      Map<String, String> annotations,
      StatusWrites writes) {
    Map<String, String> wanted = marked(annotations);
    return reserveAs(
        namespace,
        name,
        cached,
        current -> Reservation.decideUnanswered(current, consumer, unanswered, shownFrom, wanted),
        writes);
  }

  /**
   * Undoes an attempt whose allocation write to {@code read} ended without an answer and whose pod
   * is gone ({@code UnansweredSettle}): removes the finalizer on {@code read}'s version, the one
   * that write was made on, so that at most one of the two lands.
   *
   * @return the claim as stored, or empty when it changed or went since it was read (409, 404): its
   *     newer version, or its deletion, tells what became of the first write
   */
  public Optional<ResourceClaim> unreserveUnanswered(ResourceClaim read) {
    try {
      return Optional.of(removeFinalizer(read));
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 || Conflicts.isNotFound(e)) {
        return Optional.empty();
      }
      throw e;
    }
  }

  private Map<String, String> marked(Map<String, String> annotations) {
    Map<String, String> wanted = new LinkedHashMap<>(annotations);
    wanted.put(Kdra.SCHEDULER_ANNOTATION, schedulerName);
    return wanted;
  }

  private Reservation.Step reserveAs(
      String namespace,
      String name,
      ResourceClaim cached,
      Function<ResourceClaim, Reservation.Step> decide,
      StatusWrites writes) {
    ResourceClaim[] first = {cached};
    return Conflicts.retry(
        conflictRetries,
        () -> {
          ResourceClaim current = first[0];
          first[0] = null;
          Reservation.Step step = current == null ? null : decide.apply(current);
          if (!(step instanceof Reservation.Step.Write)) {
            current = get(namespace, name);
            if (current == null) {
              return new Reservation.Step.Stale("claim " + name + " is gone");
            }
            step = decide.apply(current);
          }
          if (step instanceof Reservation.Step.Write w) {
            ResourceClaim status = w.withStatus();
            if (!writes.mayWrite()) {
              return new Reservation.Step.Stale(NOT_WRITING);
            }
            try {
              if (w.withFinalizer() != null) {
                ResourceClaim updated = patchMetadata(current, w.withFinalizer());
                status =
                    new ResourceClaimBuilder(status)
                        .editMetadata()
                        .withResourceVersion(updated.getMetadata().getResourceVersion())
                        .endMetadata()
                        .build();
              }
              if (!writes.mayWrite()) {
                return new Reservation.Step.Stale(NOT_WRITING);
              }
              writes.sending(status.getMetadata().getResourceVersion());
              ResourceClaim stored = client.resource(status).updateStatus();
              writes.stored(stored.getMetadata().getResourceVersion());
            } catch (KubernetesClientException e) {
              if (Conflicts.isNotFound(e)) {
                return new Reservation.Step.Stale("claim " + name + " is gone");
              }
              throw e;
            }
          }
          return step;
        });
  }

  /**
   * Undoes a reservation this controller just made when a later step of the same scheduling attempt
   * failed: removes the pod from {@code reservedFor}; when that leaves it empty and {@code
   * deallocate}, clears the allocation and removes the finalizer.
   */
  public void release(String namespace, String name, Pod pod, boolean deallocate) {
    Conflicts.retry(
        conflictRetries,
        () -> {
          ResourceClaim current = get(namespace, name);
          if (current == null || current.getStatus() == null) {
            return null;
          }
          var refs =
              new ArrayList<>(
                  current.getStatus().getReservedFor() == null
                      ? List.of()
                      : current.getStatus().getReservedFor());
          if (!refs.removeIf(r -> pod.getMetadata().getUid().equals(r.getUid()))) {
            return null;
          }
          boolean clear = deallocate && refs.isEmpty();
          ResourceClaim status =
              new ResourceClaimBuilder(current)
                  .editStatus()
                  .withReservedFor(refs)
                  .withAllocation(clear ? null : current.getStatus().getAllocation())
                  .endStatus()
                  .build();
          ResourceClaim written = client.resource(status).updateStatus();
          if (clear) {
            removeFinalizer(written);
          }
          return null;
        });
  }

  /**
   * Frees a PodGroup's claim whose members preemption evicted: while the group exists nothing else
   * would (upstream's resourceclaim controller keeps its reservation; its scheduler deallocates it
   * only for the group's own next try). Clears {@code reservedFor} and the allocation, as
   * upstream's {@code deallocatePodGroupClaims}, only if the claim is still reserved for that group
   * alone; returns whether it was.
   */
  public boolean releaseForGroup(String namespace, String name, String groupUid) {
    Boolean done =
        Conflicts.retry(
            conflictRetries,
            () -> {
              ResourceClaim current = get(namespace, name);
              if (current == null
                  || current.getStatus() == null
                  || current.getStatus().getAllocation() == null
                  || current.getStatus().getReservedFor() == null
                  || current.getStatus().getReservedFor().size() != 1
                  || !PodGroupClaims.isPodGroup(current.getStatus().getReservedFor().get(0))
                  || !groupUid.equals(current.getStatus().getReservedFor().get(0).getUid())) {
                return false;
              }
              ResourceClaim written =
                  client
                      .resource(
                          new ResourceClaimBuilder(current)
                              .editStatus()
                              .withReservedFor(List.of())
                              .withAllocation(null)
                              .endStatus()
                              .build())
                      .updateStatus();
              removeFinalizer(written);
              return true;
            });
    return Boolean.TRUE.equals(done);
  }

  /**
   * Applies upstream's cleanup rules ({@link CleanupPlan#of}) to claim {@code namespace/name}.
   *
   * @return the plan applied, or null when the claim is gone
   */
  public CleanupPlan cleanup(String namespace, String name, PodSource pods) {
    return Conflicts.retry(
        conflictRetries,
        () -> {
          ResourceClaim current = get(namespace, name);
          if (current == null) {
            return null;
          }
          try {
            return cleanup(current, pods);
          } catch (KubernetesClientException e) {
            // deleted since it was read, e.g. by kube-controller-manager's resourceclaim controller
            // or the garbage collector: whoever comes second has nothing left to do
            if (Conflicts.isNotFound(e)) {
              return null;
            }
            throw e;
          }
        });
  }

  /** One cleanup cycle on {@code current}, as read. */
  private CleanupPlan cleanup(ResourceClaim current, PodSource pods) {
    CleanupPlan plan = CleanupPlan.of(current, pods);
    ResourceClaim latest = current;
    if (plan.statusChanged()) {
      ResourceClaim status =
          new ResourceClaimBuilder(current)
              .editOrNewStatus()
              .withReservedFor(plan.reservedFor())
              .withAllocation(plan.deallocate() ? null : current.getStatus().getAllocation())
              .endStatus()
              .build();
      latest = client.resource(status).updateStatus();
    }
    if (plan.removeFinalizer()) {
      latest = removeFinalizer(latest);
    }
    if (plan.delete()) {
      try {
        // Only the version the plan was made from: a reservation written meanwhile makes the
        // delete fail with 409, and the next cycle sees the claim in use.
        client.resource(latest).lockResourceVersion().delete();
      } catch (KubernetesClientException e) {
        if (!Conflicts.isNotFound(e)) {
          throw e;
        }
      }
    }
    return plan;
  }

  ResourceClaim removeFinalizer(ResourceClaim claim) {
    if (claim.getMetadata().getFinalizers() == null
        || !claim.getMetadata().getFinalizers().contains(Upstream.FINALIZER)) {
      return claim;
    }
    List<String> rest = new ArrayList<>(claim.getMetadata().getFinalizers());
    rest.remove(Upstream.FINALIZER);
    ResourceClaim without =
        new ResourceClaimBuilder(claim).editMetadata().withFinalizers(rest).endMetadata().build();
    return patchMetadata(claim, without);
  }

  /**
   * Writes {@code wanted}'s finalizers and annotations onto {@code read} with a JSON patch that
   * also sets the read {@code resourceVersion} (so a claim changed since is refused with 409, as an
   * update would be). Not an update: a PUT sends the whole spec back as fabric8 serialises it, and
   * opaque parameters come back with their keys reordered, which the API server refuses as a change
   * of the immutable spec ({@code spec: field is immutable}).
   */
  private ResourceClaim patchMetadata(ResourceClaim read, ResourceClaim wanted) {
    List<Map<String, Object>> ops = new ArrayList<>();
    ops.add(JsonPatchOps.onResourceVersion(read.getMetadata().getResourceVersion()));
    ops.add(
        Map.of(
            "op",
            "add",
            "path",
            "/metadata/finalizers",
            "value",
            wanted.getMetadata().getFinalizers() == null
                ? List.of()
                : wanted.getMetadata().getFinalizers()));
    ops.add(
        Map.of(
            "op",
            "add",
            "path",
            "/metadata/annotations",
            "value",
            wanted.getMetadata().getAnnotations() == null
                ? Map.of()
                : wanted.getMetadata().getAnnotations()));
    return client
        .resources(ResourceClaim.class)
        .inNamespace(read.getMetadata().getNamespace())
        .withName(read.getMetadata().getName())
        .patch(PatchContext.of(PatchType.JSON), Serialization.asJson(ops));
  }

  /** For {@link ExtendedClaimWriter}, which writes with the same client and settings. */
  KubernetesClient client() {
    return client;
  }

  int conflictRetries() {
    return conflictRetries;
  }

  /** The claim as the API server has it now, or null. */
  public ResourceClaim get(String namespace, String name) {
    return client.resources(ResourceClaim.class).inNamespace(namespace).withName(name).get();
  }
}
