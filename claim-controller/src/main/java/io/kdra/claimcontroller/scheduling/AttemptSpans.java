package io.kdra.claimcontroller.scheduling;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.claimcontroller.domain.Pods;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * An attempt's trace, kept around the phases so that none of them traces: one span per claim
 * ({@code allocate} for those the attempt allocates, {@code reserve} for the others), started once
 * the nodes are scored and ended when the binding cycle ends or the attempt places nothing. Each
 * carries the pod and the number of candidate nodes, then the node and devices chosen, and is
 * linked to the slices the devices came from; the writes carry each span in their claim's trace
 * annotation.
 */
final class AttemptSpans {

  private final ClaimTracer tracer;
  private final String pod;
  private final int candidates;
  private final Map<String, ClaimTracer.TraceSpan> byClaim;

  private AttemptSpans(
      ClaimTracer tracer, String pod, int candidates, Map<String, ClaimTracer.TraceSpan> byClaim) {
    this.tracer = tracer;
    this.pod = pod;
    this.candidates = candidates;
    this.byClaim = byClaim;
  }

  /** Starts a span for each of the attempt's claims, {@code candidates} nodes to choose from. */
  static AttemptSpans start(ClaimTracer tracer, CycleState s, int candidates) {
    String pod = Pods.key(s.pod());
    Map<String, ClaimTracer.TraceSpan> spans = new LinkedHashMap<>();
    for (ResourceClaim c : s.claims()) {
      spans.put(
          c.getMetadata().getUid(),
          tracer
              .start(c, s.unallocated().contains(c) ? "allocate" : "reserve")
              .attribute("pod", pod)
              .attribute("candidates", candidates));
    }
    return new AttemptSpans(tracer, pod, candidates, spans);
  }

  /** Runs {@code phase}; if it throws, every span ends with the error. */
  <T> T around(Supplier<T> phase) {
    try {
      return phase.get();
    } catch (RuntimeException e) {
      end(e);
      throw e;
    }
  }

  /**
   * Notes where the attempt placed the pod: a span for its special claim (null: none), and on each
   * of {@code claims}' spans and that claim's the node and devices.
   */
  void placed(
      List<ResourceClaim> claims,
      String node,
      Map<String, AllocationResult> allocations,
      ExtendedResources.InMemoryClaim special) {
    List<ResourceClaim> all = new ArrayList<>(claims);
    if (special != null) {
      byClaim.put(
          special.uid(),
          tracer
              .start(special.claim(), "allocate")
              .attribute("pod", pod)
              .attribute("candidates", candidates));
      all.add(special.claim());
    }
    for (ResourceClaim c : all) {
      AllocationResult a = allocations.get(c.getMetadata().getUid());
      byClaim
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
  }

  /**
   * Links each recording allocate span to the slices its devices came from (the slices of the
   * devices' pools): outside the scheduling lock.
   */
  void linkSlices(
      BiFunction<String, String, List<ResourceSlice>> poolSlices,
      Map<String, AllocationResult> allocations) {
    allocations.forEach(
        (uid, a) -> {
          ClaimTracer.TraceSpan span = byClaim.get(uid);
          if (span != null && span.recording()) {
            TraceLinks.ofSlices(poolSlices, a).forEach(span::link);
          }
        });
  }

  /** Claim UID to its span, for the writes' trace annotations. */
  Map<String, ClaimTracer.TraceSpan> byClaim() {
    return byClaim;
  }

  void end() {
    byClaim.values().forEach(ClaimTracer.TraceSpan::end);
  }

  void end(Throwable error) {
    byClaim.values().forEach(s -> s.end(error));
  }
}
