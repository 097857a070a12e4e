package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.util.ArrayList;
import java.util.List;

/**
 * The structured allocator: decides, for one node, which devices a set of claims (typically one
 * pod's) would get, exactly as upstream's {@code k8s.io/dynamic-resource-allocation/structured}
 * allocator of Kubernetes 1.36 would, and explains why not when it cannot.
 *
 * <p>Contract: {@link #allocate} is all-or-nothing (every claim is allocated, or none is), pure
 * (reads only the snapshot and options; the caller persists results and derives the next snapshot),
 * deterministic for a deterministic share-ID supplier, thread-safe, and never throws for bad input:
 * conditions upstream reports as errors (missing DeviceClass, CEL failures, disabled features,
 * {@code All} on an incomplete pool) become {@link Explanation}s on the claim. Work is bounded by
 * {@link AllocatorOptions#stepBudget()}.
 */
public final class Allocator {

  private final AllocationSnapshot snapshot;
  private final AllocatorOptions options;

  public Allocator(AllocationSnapshot snapshot, AllocatorOptions options) {
    this.snapshot = snapshot;
    this.options = options;
  }

  public AllocationSnapshot snapshot() {
    return snapshot;
  }

  public AllocatorOptions options() {
    return options;
  }

  /**
   * Allocates all claims together on {@code node}. Claims must not be allocated already.
   *
   * @return one outcome per claim, in input order: all {@link ClaimOutcome.Allocated}, or all
   *     {@link ClaimOutcome.NotAllocated}
   */
  public List<ClaimOutcome> allocate(Node node, List<ResourceClaim> claims) {
    Attempt attempt = attempt(node, claims);
    if (attempt.results() != null) {
      List<ClaimOutcome> out = new ArrayList<>();
      for (int i = 0; i < claims.size(); i++) {
        out.add(new ClaimOutcome.Allocated(claims.get(i), attempt.results().get(i)));
      }
      return out;
    }
    return Diagnoser.outcomes(snapshot, options, node, claims, attempt);
  }

  /** The search for one pod's claims over many nodes, one node at a time ({@link PodScheduler}). */
  PodSearch forPod(List<ResourceClaim> claims) {
    return forPod(claims, Deadline.NONE);
  }

  /** As {@link #forPod(List)}, each node's search giving up once {@code deadline} passed. */
  PodSearch forPod(List<ResourceClaim> claims, Deadline deadline) {
    return new PodSearch(this, claims, deadline);
  }

  /** The result of one attempt on one node: results, or why there are none. */
  record Attempt(
      List<AllocationResult> results, AllocationProblem problem, SearchLimitException limit) {}

  Attempt attempt(Node node, List<ResourceClaim> claims) {
    return attempt(node, claims, null);
  }

  /**
   * True when the node certainly cannot take the claims: none of them asks for admin access or for
   * {@code All} devices, and every usable pool on the node is known to be fully allocated.
   * O(pools); lets first-fit over many full nodes skip them without starting a search. False means
   * "unknown". {@code All} is never skipped: upstream reports an incomplete or invalid pool on the
   * node as an error that fails the pod, and evaluates selectors on allocated devices too.
   */
  boolean certainlyFull(Node node, List<ResourceClaim> claims) {
    return fullNodesSkippable(claims) && poolsFull(node);
  }

  /**
   * The node-independent half of {@link #certainlyFull}: whether a node whose pools are all full
   * can be skipped for these claims (checked once per pod, not once per node).
   */
  boolean fullNodesSkippable(List<ResourceClaim> claims) {
    for (ResourceClaim c : claims) {
      if (c.getSpec() == null
          || c.getSpec().getDevices() == null
          || c.getSpec().getDevices().getRequests() == null) {
        return false;
      }
      for (var r : c.getSpec().getDevices().getRequests()) {
        if (r.getExactly() != null
            && (Boolean.TRUE.equals(r.getExactly().getAdminAccess())
                || "All".equals(r.getExactly().getAllocationMode()))) {
          return false;
        }
        if (r.getFirstAvailable() != null
            && r.getFirstAvailable().stream().anyMatch(s -> "All".equals(s.getAllocationMode()))) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * The node half of {@link #certainlyFull}: every usable pool on the node is known to be fully
   * allocated in this snapshot's state. Stays true in every state that includes this one.
   */
  boolean poolsFull(Node node) {
    for (Pool p : snapshot.inventory().poolsFor(node, options.features())) {
      if (p.usable() && !p.exhaustion().isFull(snapshot.allocated())) {
        return false;
      }
    }
    return true;
  }

  /**
   * Plans that do not depend on the node (no request uses All), to reuse across nodes; null when
   * some request uses All or preparing fails (then each node prepares, and reports, by itself).
   */
  List<ClaimPlan> prepareForAnyNode(List<ResourceClaim> claims) {
    for (ResourceClaim c : claims) {
      if (c.getSpec() == null
          || c.getSpec().getDevices() == null
          || c.getSpec().getDevices().getRequests() == null) {
        return null;
      }
      for (var r : c.getSpec().getDevices().getRequests()) {
        if (r.getExactly() != null && "All".equals(r.getExactly().getAllocationMode())) {
          return null;
        }
        if (r.getFirstAvailable() != null
            && r.getFirstAvailable().stream().anyMatch(s -> "All".equals(s.getAllocationMode()))) {
          return null;
        }
      }
    }
    try {
      return prepare(claims, List.of(), null);
    } catch (AllocationProblem p) {
      return null;
    }
  }

  /**
   * One attempt on one node. {@code shared} plans (from {@link #prepareForAnyNode}) are reused when
   * given; a failed search leaves them clean (every pick undone), an aborted one does not, so
   * callers must drop them after a search limit.
   */
  Attempt attempt(Node node, List<ResourceClaim> claims, List<ClaimPlan> shared) {
    return attempt(node, claims, shared, Deadline.NONE);
  }

  /**
   * As {@link #attempt(Node, List, List)}, the search throwing {@link SearchDeadlineException} once
   * {@code deadline} passed (its picks left behind, as after a search limit).
   */
  Attempt attempt(
      Node node, List<ResourceClaim> claims, List<ClaimPlan> shared, Deadline deadline) {
    List<Pool> pools = snapshot.inventory().poolsFor(node, options.features());
    DeviceMatcher matcher =
        new DeviceMatcher(
            options.selectors(),
            options.features(),
            node,
            snapshot.inventory().cachesResultsOf(options.selectors()));
    try {
      List<ClaimPlan> plans = shared != null ? shared : prepare(claims, pools, matcher);
      Search search =
          new Search(
              plans,
              pools,
              snapshot.allocated(),
              options.features(),
              matcher,
              options.shareIds(),
              options.stepBudget(),
              deadline);
      if (!search.run()) {
        return new Attempt(null, null, null);
      }
      List<List<Search.Pick>> picks = search.picks();
      List<AllocationResult> results = new ArrayList<>();
      for (int i = 0; i < plans.size(); i++) {
        results.add(
            ResultBuilder.build(
                plans.get(i), picks.get(i), node.getMetadata().getName(), options.features()));
      }
      return new Attempt(results, null, null);
    } catch (AllocationProblem p) {
      return new Attempt(null, p, null);
    } catch (SearchLimitException e) {
      return new Attempt(null, null, e);
    }
  }

  private List<ClaimPlan> prepare(
      List<ResourceClaim> claims, List<Pool> pools, DeviceMatcher matcher) {
    List<ClaimPlan> plans = new ArrayList<>();
    for (int i = 0; i < claims.size(); i++) {
      plans.add(
          ClaimPlan.prepare(
              i,
              claims.get(i),
              snapshot.classes(),
              pools,
              options.features(),
              matcher,
              snapshot.allocated()));
    }
    return plans;
  }

  /** A claim as namespace/name, in explanations. */
  static String key(ResourceClaim c) {
    return c.getMetadata().getNamespace() + "/" + c.getMetadata().getName();
  }
}
