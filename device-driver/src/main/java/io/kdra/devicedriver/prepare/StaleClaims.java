package io.kdra.devicedriver.prepare;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Which checkpointed claims the API says are gone, and when that has lasted long enough to
 * unprepare them: the driver's share of the cleanup upstream's kubelet does when a pod goes. A
 * claim whose unprepare never came (the kubelet lost its state, the driver was down when the pod
 * went, a force-deleted pod) otherwise keeps its CDI spec, its MIG instance or MPS daemon, and
 * counts as a user of a shared GPU forever. Pure.
 *
 * <p>Only evidence counts: a claim the API holds with the same UID, allocated on this node and
 * reserved for a pod, is in use and never touched; an API error says nothing either way. An entry
 * rebuilt from its CDI spec knows its claim's UID but not its name: it is looked up by UID in a
 * list of all claims, and absence from that (whole, consistent) list proves the claim deleted as a
 * 404 by name does. A claim that is gone must stay gone for {@code grace} before it is unprepared,
 * so that a transient state (reservedFor between two pods, a read racing a prepare) never releases
 * a device a pod is about to use. The devices are node-local, so any pod a claim is reserved for
 * runs on this node.
 */
public final class StaleClaims {
  private StaleClaims() {}

  /** What the API says of one checkpointed claim. */
  public enum State {
    /** The claim exists as prepared and a pod holds it: leave it. */
    IN_USE,
    /** Deleted, replaced, deallocated or held by no pod: unprepare after the grace period. */
    GONE,
    /** Cannot tell now: neither starts nor ends the grace period. */
    UNKNOWN
  }

  /** A claim's state and why. */
  public record Observation(State state, String reason) {
    static Observation inUse() {
      return new Observation(State.IN_USE, "");
    }

    static Observation gone(String reason) {
      return new Observation(State.GONE, reason);
    }

    static Observation unknown(String reason) {
      return new Observation(State.UNKNOWN, reason);
    }
  }

  /**
   * Classifies a checkpointed claim by what the API returned for its namespace and name.
   *
   * @param uid the checkpointed claim's UID
   * @param apiClaim the claim read by name; empty when the API says it does not exist
   * @param driver this driver's name, @param pool this node's pool
   */
  public static Observation observe(
      String uid, Optional<ResourceClaim> apiClaim, String driver, String pool) {
    if (apiClaim.isEmpty()) {
      return Observation.gone("the resourceclaim no longer exists");
    }
    return held(uid, apiClaim.get(), driver, pool);
  }

  /**
   * Classifies a checkpointed claim whose name is not known (rebuilt from its CDI spec) by what a
   * whole list of the cluster's claims holds with its UID.
   *
   * @param listed the claim of that UID; empty when the list holds none
   */
  public static Observation observeByUid(
      String uid, Optional<ResourceClaim> listed, String driver, String pool) {
    if (listed.isEmpty()) {
      return Observation.gone("no resourceclaim has its uid any more");
    }
    return held(uid, listed.get(), driver, pool);
  }

  /** Whether an existing claim still holds this node's devices as prepared, for a pod. */
  private static Observation held(String uid, ResourceClaim c, String driver, String pool) {
    String apiUid = c.getMetadata() == null ? null : c.getMetadata().getUid();
    if (!uid.equals(apiUid)) {
      return Observation.gone("its name now belongs to a claim with uid " + apiUid);
    }
    AllocationResult allocation = c.getStatus() == null ? null : c.getStatus().getAllocation();
    if (allocation == null || allocation.getDevices() == null) {
      return Observation.gone("the claim is no longer allocated");
    }
    List<DeviceRequestAllocationResult> results =
        Objects.requireNonNullElse(allocation.getDevices().getResults(), List.of());
    if (results.stream().noneMatch(r -> driver.equals(r.getDriver()) && pool.equals(r.getPool()))) {
      return Observation.gone("the claim is now allocated without devices of this node");
    }
    if (c.getStatus().getReservedFor() == null || c.getStatus().getReservedFor().isEmpty()) {
      return Observation.gone("the claim is reserved for no pod");
    }
    return Observation.inUse();
  }

  /** An API read that failed. */
  public static Observation unreadable(String error) {
    return Observation.unknown("the API cannot be read: " + error);
  }

  /**
   * The outcome of one pass.
   *
   * @param unprepare the claims to unprepare now, UID to the reason
   * @param goneSince when each claim still waiting out its grace period was first seen gone
   */
  public record Decision(Map<String, String> unprepare, Map<String, Instant> goneSince) {
    public Decision {
      unprepare = Map.copyOf(unprepare);
      goneSince = Map.copyOf(goneSince);
    }
  }

  /**
   * @param observed the checkpointed claims' states, by UID (claims no longer checkpointed are
   *     absent, and so forgotten)
   * @param goneSince the previous pass's {@link Decision#goneSince}
   */
  public static Decision decide(
      Map<String, Observation> observed,
      Map<String, Instant> goneSince,
      Instant now,
      Duration grace) {
    Map<String, String> unprepare = new TreeMap<>();
    Map<String, Instant> waiting = new HashMap<>();
    observed.forEach(
        (uid, o) -> {
          switch (o.state()) {
            case IN_USE -> {}
            case UNKNOWN -> {
              Instant since = goneSince.get(uid);
              if (since != null) {
                waiting.put(uid, since);
              }
            }
            case GONE -> {
              Instant since = goneSince.getOrDefault(uid, now);
              Duration gone = Duration.between(since, now);
              if (gone.compareTo(grace) >= 0) {
                unprepare.put(uid, o.reason() + " (for " + gone.toSeconds() + "s)");
              } else {
                waiting.put(uid, since);
              }
            }
          }
        });
    return new Decision(unprepare, waiting);
  }
}
