package io.kdra.slicepublisher.k8s;

import static io.kdra.slicepublisher.domain.Fixtures.T0;
import static io.kdra.slicepublisher.domain.Fixtures.counterSet;
import static io.kdra.slicepublisher.domain.Fixtures.dev;
import static io.kdra.slicepublisher.domain.Fixtures.inv;
import static io.kdra.slicepublisher.domain.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.kdra.slicepublisher.domain.DesiredPool;
import io.kdra.slicepublisher.domain.Fixtures;
import io.kdra.slicepublisher.domain.PlannerSettings;
import io.kdra.slicepublisher.domain.PoolSyncPlanner;
import io.kdra.slicepublisher.domain.SlicePlanner;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A server that drops fields (feature gate off) must not cause a write on every resync. */
class DroppedFieldsTest {

  private static final SlicePlanner PLANNER =
      new SlicePlanner(PlannerSettings.defaults(Fixtures.DRIVER));

  private static DesiredPool partitioned(String model) {
    return PLANNER
        .planPool(
            inv("n1", List.of(dev("gpu-0").withAttribute("model", model).consuming("mem")))
                .withCounters(counterSet("mem"))
                .build(),
            node("n1"),
            T0)
        .orElseThrow();
  }

  /** What a 1.34 server without DRAPartitionableDevices stores: no consumesCounters. */
  private static ResourceSlice asStored(ResourceSlice sent) {
    ResourceSlice s =
        new ResourceSliceBuilder(sent)
            .editMetadata()
            .withResourceVersion("7")
            .endMetadata()
            .build();
    s.getSpec().getDevices().forEach(d -> d.setConsumesCounters(List.of()));
    return s;
  }

  @Test
  void whatTheServerMadeOfTheSameContentCountsAsPublished() {
    DroppedFields dropped = new DroppedFields();
    List<ResourceSlice> sent = partitioned("H100").toSlices(0);
    ResourceSlice deviceSlice = sent.get(1);
    ResourceSlice stored = asStored(deviceSlice);
    assertThat(dropped.record(deviceSlice, stored)).as("reported once").isTrue();
    assertThat(dropped.record(deviceSlice, stored)).as("not again").isFalse();

    List<ResourceSlice> actual = List.of(sent.get(0), stored);
    assertThat(PoolSyncPlanner.plan(Optional.of(partitioned("H100")), actual).writes())
        .as("without the memo: a write on every sync")
        .hasSize(2);
    assertThat(
            PoolSyncPlanner.plan(Optional.of(partitioned("H100")), actual, dropped::sameContent)
                .writes())
        .as("with it: none")
        .isEmpty();
    assertThat(
            PoolSyncPlanner.plan(Optional.of(partitioned("B200")), actual, dropped::sameContent)
                .writes())
        .as("a real change still writes")
        .hasSize(2);
  }

  @Test
  void aFaithfulServerLeavesNoMemo() {
    DroppedFields dropped = new DroppedFields();
    ResourceSlice sent = partitioned("H100").toSlices(0).get(1);
    assertThat(dropped.record(sent, new ResourceSliceBuilder(sent).build())).isFalse();
  }
}
