package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;

/** What happened to one claim: allocated with a result, or not, with an explanation. */
public sealed interface ClaimOutcome {

  ResourceClaim claim();

  /** {@code namespace/name} of the claim. */
  default String claimKey() {
    var m = claim().getMetadata();
    // like the API server, a claim without a namespace is in "default"
    String ns =
        m == null || m.getNamespace() == null || m.getNamespace().isEmpty()
            ? "default"
            : m.getNamespace();
    return ns + "/" + (m == null ? "" : m.getName());
  }

  /** The claim got devices; {@code result} is what the caller writes to status.allocation. */
  record Allocated(ResourceClaim claim, AllocationResult result) implements ClaimOutcome {}

  /** The claim got nothing; {@code explanation} says why. */
  record NotAllocated(ResourceClaim claim, Explanation explanation) implements ClaimOutcome {}
}
