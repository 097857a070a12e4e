package io.kdra.slicepublisher.template;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.slicepublisher.domain.NodeInfo;
import io.kdra.slicepublisher.domain.NodeInventory;
import io.kdra.slicepublisher.domain.SlicePlanner;
import io.kdra.slicepublisher.grpc.SnapshotConverter;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The ResourceSlices a node that does not exist yet will get, for an autoscaler's simulation
 * (Karpenter's {@code InstanceType.DynamicResources.ResourceSliceTemplates}): the driver's snapshot
 * for that node goes through the publisher's own converter and planner, exactly as a real node's
 * would, so a template cannot promise what the publisher will not write.
 *
 * <p>What a template cannot know is left out, as Karpenter's templates expect: {@code nodeName}
 * (templates are implicitly node-local) and the owner. The pool is named after the instance type
 * instead of the node; generation and slice count are those of a first publication. Node-label
 * attributes ({@code kdra.slice-publisher.node-label-attributes}) are filled from {@code
 * nodeLabels}, the labels every node of the type will carry; a label whose value differs per node
 * (the hostname) cannot be templated and should not be among them.
 */
public final class TemplateSlices {

  /** The UID of the node that does not exist; only the owner reference, dropped, would use it. */
  private static final String NO_UID = "template";

  private final SnapshotConverter converter;
  private final SlicePlanner planner;

  public TemplateSlices(SnapshotConverter converter, SlicePlanner planner) {
    this.converter = converter;
    this.planner = planner;
  }

  /**
   * The template slices of one instance type, counter sets first, in the publisher's order; empty
   * when the publisher would publish nothing (no devices, or a driver it does not serve).
   *
   * @param snapshot what the driver reports on such a node; its node name is replaced
   * @param instanceType names the pool
   * @param nodeLabels labels every node of the type has
   * @param now the time of the simulated publication (no staleness applies at it)
   * @throws IllegalArgumentException with the publisher's own reasons, when it would refuse the
   *     snapshot
   */
  public List<ResourceSliceSpec> forInstanceType(
      InventorySnapshot snapshot,
      String instanceType,
      Map<String, String> nodeLabels,
      Instant now) {
    SnapshotConverter.Result converted =
        converter.convert(snapshot.toBuilder().setNodeName(instanceType).build(), now);
    if (!converted.ok()) {
      throw new IllegalArgumentException(
          "the publisher would refuse the snapshot for "
              + instanceType
              + ": "
              + String.join("; ", converted.errors()));
    }
    NodeInventory inventory = converted.inventory();
    return planner
        .planPool(inventory, new NodeInfo(instanceType, NO_UID, nodeLabels), now)
        .map(pool -> pool.toSlices(1).stream().map(TemplateSlices::template).toList())
        .orElse(List.of());
  }

  private static ResourceSliceSpec template(ResourceSlice slice) {
    ResourceSliceSpec spec = slice.getSpec();
    spec.setNodeName(null);
    return spec;
  }
}
