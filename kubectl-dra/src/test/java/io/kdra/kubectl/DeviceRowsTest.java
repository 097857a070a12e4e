package io.kdra.kubectl;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DeviceRowsTest {

  private final ClusterState cluster = Fixture.cluster();
  private final DeviceSelectorEnvironment cel = DeviceSelectorEnvironment.create(false);

  @Test
  void everyDeviceOfTheNewestPoolGenerationWithNodeClassesClaimAndTaints() {
    assertThat(DeviceRows.rows(cluster.slices(), cluster.deviceClasses(), cluster.claims(), cel))
        .containsExactly(
            new DeviceRows.Row(
                "node-a",
                "gpu.example.com",
                "node-a",
                "gpu-0",
                List.of("gpu"),
                List.of(),
                List.of()),
            new DeviceRows.Row(
                "node-a",
                "gpu.example.com",
                "node-a",
                "gpu-1",
                List.of("gpu"),
                List.of(),
                List.of("gpu.example.com/unhealthy=ecc:NoSchedule")),
            new DeviceRows.Row(
                "node-b",
                "gpu.example.com",
                "node-b",
                "gpu-0",
                List.of("gpu"),
                List.of("ml/trainer-gpu"),
                List.of()));
  }

  @Test
  void aClassWithoutSelectorsMatchesAllAndOneWhoseSelectorFailsSaysSo() {
    List<io.fabric8.kubernetes.api.model.resource.v1.DeviceClass> classes =
        new ArrayList<>(cluster.deviceClasses());
    classes.add(
        new DeviceClassBuilder()
            .withNewMetadata()
            .withName("any")
            .endMetadata()
            .withNewSpec()
            .endSpec()
            .build());
    classes.add(
        new DeviceClassBuilder()
            .withNewMetadata()
            .withName("broken")
            .endMetadata()
            .withNewSpec()
            .addNewSelector()
            .withNewCel()
            .withExpression("device.attributes[\"other.example.com\"].model == \"x\"")
            .endCel()
            .endSelector()
            .endSpec()
            .build());
    assertThat(DeviceRows.rows(cluster.slices(), classes, List.of(), cel).get(0).classes())
        .containsExactly("any", "broken(CEL error)", "gpu");
  }

  @Test
  void aRulesTaintNamesTheRule() {
    var rule =
        new io.kdra.core.taint.DeviceTaintRule(
            new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("maintenance").build(),
            new io.kdra.core.taint.DeviceTaintRuleSpec(
                new io.kdra.core.taint.DeviceTaintSelector("gpu.example.com", "node-b", null),
                new io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint(
                    "NoExecute", "drain", null, null)));
    var slices = io.kdra.core.taint.DeviceTaintRules.apply(cluster.slices(), List.of(rule));

    assertThat(DeviceRows.rows(slices, cluster.deviceClasses(), cluster.claims(), cel))
        .filteredOn(r -> r.node().equals("node-b"))
        .allSatisfy(
            r ->
                assertThat(r.taints())
                    .containsExactly("drain:NoExecute (DeviceTaintRule maintenance)"));
  }
}
