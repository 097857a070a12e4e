package io.kdra.core.alloc;

import io.fabric8.kubernetes.api.model.Node;
import io.kdra.core.model.NewerFields;

/**
 * Whether a device whose slice lists {@code skipNodeOperations} may be allocated on a node
 * (DRAOptionalNodeOperations, alpha in 1.37), as upstream 1.37.2's allocators decide: the
 * experimental one ({@code allocateDevice}) allows it only with the gate on and on a node whose
 * kubelet declares the feature in {@code status.declaredFeatures}; the incubating one does not read
 * the field. A kubelet that skips a call it would otherwise make must agree to, hence the node's
 * declaration.
 */
enum NodeOperations {
  /** The incubating allocator: the field is not read, and not copied into results. */
  IGNORED,
  /** Such devices are not allocated (gate off, or the node does not declare the feature). */
  REFUSED,
  /** Such devices are allocated, and the slice's list copied into their results. */
  ALLOWED;

  /** The node feature a kubelet declares when it honours {@code skipNodeOperations}. */
  static final String FEATURE = "DRAOptionalNodeOperations";

  /**
   * For {@code node}; null (no node yet: an explanation over all nodes) allows what the gate does.
   */
  static NodeOperations on(AllocatorFeatures features, Node node) {
    if (!features.experimental()) {
      return IGNORED;
    }
    return features.optionalNodeOperations()
            && (node == null || NewerFields.declaredFeatures(node).contains(FEATURE))
        ? ALLOWED
        : REFUSED;
  }

  /** Whether the device may be allocated on this node. */
  boolean allows(CandidateDevice d) {
    return this != REFUSED || d.slice().skipNodeOperations().isEmpty();
  }
}
