package io.kdra.slicepublisher.template;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpecBuilder;
import io.kdra.inventory.v1.AttributeValue;
import io.kdra.inventory.v1.CounterConsumption;
import io.kdra.inventory.v1.CounterSet;
import io.kdra.inventory.v1.Device;
import io.kdra.inventory.v1.InventorySnapshot;
import io.kdra.slicepublisher.domain.NodeInfo;
import io.kdra.slicepublisher.domain.PlannerSettings;
import io.kdra.slicepublisher.domain.SlicePlanner;
import io.kdra.slicepublisher.grpc.SnapshotConverter;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class TemplateSlicesTest {

  private static final Instant NOW = Instant.parse("2026-12-06T12:00:00Z");
  private static final String TYPE_LABEL = "node.kubernetes.io/instance-type";
  private static final Map<String, String> TYPE_LABELS = Map.of(TYPE_LABEL, "a100-40gb-x2");

  private final SlicePlanner planner =
      new SlicePlanner(
          PlannerSettings.defaults("gpu.kdra.io").withNodeLabelAttributes(List.of(TYPE_LABEL)));
  private final SnapshotConverter converter = new SnapshotConverter(1, 1024);
  private final TemplateSlices templates = new TemplateSlices(converter, planner);

  private static Device.Builder gpu(int i) {
    return Device.newBuilder()
        .setName("gpu-" + i)
        .putAttributes(
            "productName", AttributeValue.newBuilder().setString("NVIDIA A100-SXM4-40GB").build())
        .putAttributes("index", AttributeValue.newBuilder().setInt(i).build())
        .putCapacity("memory", "40Gi");
  }

  private static InventorySnapshot snapshot(int gpus) {
    InventorySnapshot.Builder s =
        InventorySnapshot.newBuilder().setDriver("gpu.kdra.io").setNodeName("any").setSequence(1);
    IntStream.range(0, gpus).forEach(i -> s.addDevices(gpu(i)));
    return s.build();
  }

  /** What the publisher writes for a real node that reported {@code s}. */
  private List<ResourceSliceSpec> published(InventorySnapshot s, NodeInfo node) {
    var inventory =
        converter.convert(s.toBuilder().setNodeName(node.name()).build(), NOW).inventory();
    return planner.planPool(inventory, node, NOW).orElseThrow().toSlices(1).stream()
        .map(r -> r.getSpec())
        .toList();
  }

  @Test
  void aTemplateIsWhatTheNodeWillGetLessItsNodeAndPoolName() {
    InventorySnapshot s = snapshot(2);
    NodeInfo realNode =
        new NodeInfo(
            "kwok-node-7",
            "uid-7",
            Map.of(TYPE_LABEL, "a100-40gb-x2", "kubernetes.io/hostname", "kwok-node-7"));

    List<ResourceSliceSpec> template =
        templates.forInstanceType(s, "a100-40gb-x2", TYPE_LABELS, NOW);

    List<ResourceSliceSpec> expected =
        published(s, realNode).stream()
            .map(
                spec ->
                    new ResourceSliceSpecBuilder(spec)
                        .withNodeName(null)
                        .editPool()
                        .withName("a100-40gb-x2")
                        .endPool()
                        .build())
            .toList();
    assertThat(template).isEqualTo(expected);
    assertThat(template.get(0).getDevices())
        .extracting(d -> d.getAttributes().get(SlicePlanner.attributeName(TYPE_LABEL)).getString())
        .containsOnly("a100-40gb-x2");
  }

  @Test
  void counterSetsComeInSlicesOfTheirOwnAsKarpenterTemplatesRequire() {
    InventorySnapshot s =
        InventorySnapshot.newBuilder()
            .setDriver("gpu.kdra.io")
            .setNodeName("any")
            .setSequence(1)
            .addSharedCounters(
                CounterSet.newBuilder().setName("gpu-0-memory").putCounters("memory", "40Gi"))
            .addDevices(
                gpu(0)
                    .addConsumesCounters(
                        CounterConsumption.newBuilder()
                            .setCounterSet("gpu-0-memory")
                            .putCounters("memory", "40Gi")))
            .build();

    List<ResourceSliceSpec> template = templates.forInstanceType(s, "t", Map.of(), NOW);

    assertThat(template).hasSize(2);
    assertThat(template.get(0).getSharedCounters()).hasSize(1);
    assertThat(template.get(0).getDevices()).isEmpty();
    assertThat(template.get(1).getSharedCounters()).isEmpty();
    assertThat(template.get(1).getDevices()).extracting(d -> d.getName()).containsExactly("gpu-0");
    assertThat(template)
        .allSatisfy(t -> assertThat(t.getPool().getResourceSliceCount()).isEqualTo(2));
  }

  @Test
  void manyDevicesAreSplitAsThePublisherSplitsThem() {
    List<ResourceSliceSpec> template =
        templates.forInstanceType(snapshot(130), "big", TYPE_LABELS, NOW);
    assertThat(template).extracting(t -> t.getDevices().size()).containsExactly(128, 2);
  }

  @Test
  void aDriverThePublisherDoesNotServeGetsNoTemplate() {
    InventorySnapshot other = snapshot(1).toBuilder().setDriver("tpu.kdra.io").build();
    assertThat(templates.forInstanceType(other, "t", Map.of(), NOW)).isEmpty();
  }

  @Test
  void aSnapshotThePublisherWouldRefuseIsRefusedWithItsReason() {
    InventorySnapshot bad = snapshot(1).toBuilder().setDriver("GPU.kdra.io").build();
    assertThatThrownBy(() -> templates.forInstanceType(bad, "t", Map.of(), NOW))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the publisher would refuse the snapshot for t")
        .hasMessageContaining("lower case");
  }
}
