package io.kdra.claimcontroller.domain;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.kdra.claimcontroller.domain.NodeFilter.Allocatable;
import io.kdra.claimcontroller.domain.NodeFilter.NodeUsage;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * kube-scheduler's two resource scores over CPU and memory, each resource of weight 1 ({@code
 * noderesources/least_allocated.go}, {@code balanced_allocation.go}, {@code
 * resource_allocation.go}), not normalised further (both are 0..100 already).
 *
 * <ul>
 *   <li>NodeResourcesFit, {@code LeastAllocated} (the default strategy): per resource, {@code
 *       (allocatable - requested) * 100 / allocatable}, averaged, where requested is what the
 *       node's pods request ({@link PodRequests#nonZero}) plus what the pod's containers request
 *       ({@link PodRequests#nonZeroOfContainers}: its pod-level requests left out, as upstream 1.37
 *       does), each container's missing CPU or memory request counted as 100m or 200Mi; a resource
 *       the node does not offer is left out. Emptier nodes score higher.
 *   <li>NodeResourcesBalancedAllocation: {@code 50 + (50 + balance(with pod) - balance(without)) /
 *       2}, where balance is {@code (1 - std) * 100} of the requested fractions (capped at 1), with
 *       the requests as declared. Nodes whose CPU and memory use the pod evens out score higher. A
 *       pod requesting neither is not scored (upstream's PreScore Skip).
 * </ul>
 *
 * Pure.
 */
final class ResourceScores {

  private ResourceScores() {}

  /** LeastAllocated scores, in {@code nodes}' order. */
  static long[] leastAllocated(
      Pod pod,
      List<Node> nodes,
      Map<String, NodeUsage> usage,
      Function<Node, Allocatable> allocatable) {
    PodRequests wanted = PodRequests.nonZeroOfContainers(pod);
    long[] out = new long[nodes.size()];
    for (int i = 0; i < out.length; i++) {
      Node n = nodes.get(i);
      PodRequests offered = allocatable.apply(n).requests();
      PodRequests used = usage.getOrDefault(n.getMetadata().getName(), NodeUsage.NONE).nonZero();
      long[] alloc = {offered.milliCpu(), offered.memoryBytes()};
      long[] requested = {
        used.milliCpu() + wanted.milliCpu(), used.memoryBytes() + wanted.memoryBytes()
      };
      out[i] = leastAllocated(requested, alloc);
    }
    return out;
  }

  /** Upstream's {@code leastResourceScorer} with weight 1 per resource. */
  static long leastAllocated(long[] requested, long[] allocatable) {
    long score = 0;
    long weights = 0;
    for (int r = 0; r < requested.length; r++) {
      if (allocatable[r] == 0) {
        continue;
      }
      score += leastRequested(requested[r], allocatable[r]);
      weights++;
    }
    return weights == 0 ? 0 : score / weights;
  }

  private static long leastRequested(long requested, long capacity) {
    if (capacity == 0 || requested > capacity) {
      return 0;
    }
    return (capacity - requested) * NodeScoring.MAX_NODE_SCORE / capacity;
  }

  /**
   * BalancedAllocation scores in {@code nodes}' order, or null for a pod that requests no CPU and
   * no memory.
   */
  static long[] balancedAllocation(
      Pod pod,
      List<Node> nodes,
      Map<String, NodeUsage> usage,
      Function<Node, Allocatable> allocatable) {
    PodRequests wanted = PodRequests.of(pod);
    long wantedCpu = wanted.milliCpu();
    long wantedMemory = wanted.memoryBytes();
    if (wantedCpu == 0 && wantedMemory == 0) {
      return null;
    }
    long[] out = new long[nodes.size()];
    for (int i = 0; i < out.length; i++) {
      Node n = nodes.get(i);
      PodRequests offered = allocatable.apply(n).requests();
      PodRequests used = usage.getOrDefault(n.getMetadata().getName(), NodeUsage.NONE).requests();
      long[] alloc = {offered.milliCpu(), offered.memoryBytes()};
      long[] allocated = {used.milliCpu(), used.memoryBytes()};
      long[] requested = {allocated[0] + wantedCpu, allocated[1] + wantedMemory};
      for (int r = 0; r < alloc.length; r++) {
        if (alloc[r] == 0) {
          allocated[r] = 0;
          requested[r] = 0;
        }
      }
      out[i] = balanced(requested, allocated, alloc);
    }
    return out;
  }

  /** Upstream's {@code balancedResourceScorer}. */
  static long balanced(long[] requested, long[] allocated, long[] allocatable) {
    long withPod = balance(requested, allocatable);
    long withoutPod = balance(allocated, allocatable);
    long max = NodeScoring.MAX_NODE_SCORE;
    return max / 2 + (max / 2 + withPod - withoutPod) / 2;
  }

  /** Upstream's {@code balancedResourceScore}: {@code (1 - std) * 100} of the fractions. */
  static long balance(long[] requested, long[] allocatable) {
    double[] fractions = new double[requested.length];
    int n = 0;
    double total = 0;
    for (int r = 0; r < requested.length; r++) {
      if (allocatable[r] == 0) {
        continue;
      }
      double f = Math.min(1, (double) requested[r] / (double) allocatable[r]);
      total += f;
      fractions[n++] = f;
    }
    double std = 0;
    if (n == 2) {
      std = Math.abs((fractions[0] - fractions[1]) / 2);
    } else if (n > 2) {
      double mean = total / n;
      double sum = 0;
      for (int r = 0; r < n; r++) {
        sum += (fractions[r] - mean) * (fractions[r] - mean);
      }
      std = Math.sqrt(sum / n);
    }
    return (long) ((1 - std) * NodeScoring.MAX_NODE_SCORE);
  }
}
