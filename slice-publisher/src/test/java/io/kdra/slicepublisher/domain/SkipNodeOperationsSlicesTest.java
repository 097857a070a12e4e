package io.kdra.slicepublisher.domain;

import static io.kdra.slicepublisher.domain.Fixtures.DRIVER;
import static io.kdra.slicepublisher.domain.Fixtures.T0;
import static io.kdra.slicepublisher.domain.Fixtures.counterSet;
import static io.kdra.slicepublisher.domain.Fixtures.devs;
import static io.kdra.slicepublisher.domain.Fixtures.inv;
import static io.kdra.slicepublisher.domain.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.kdra.core.model.NewerFields;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The driver's {@code skip-node-operations} as the slices' {@code skipNodeOperations}: written on
 * every slice with devices, never on a counter-only slice, and not at all when the driver declares
 * none.
 */
class SkipNodeOperationsSlicesTest {

  private static final SlicePlanner PLANNER = new SlicePlanner(PlannerSettings.defaults(DRIVER));

  private static List<ResourceSlice> slices(NodeInventory inventory) {
    return PLANNER.planPool(inventory, node("n1"), T0).orElseThrow().toSlices(0);
  }

  static Stream<Arguments> pools() {
    List<String> all = List.of("*");
    List<String> both = List.of("NodePrepareResources", "NodeUnprepareResources");
    return Stream.of(
        // operations declared, slices (counter slices first), each slice's skipNodeOperations
        Arguments.of(List.of(), 0, List.of(List.of())),
        Arguments.of(all, 0, List.of(all)),
        Arguments.of(both, 0, List.of(both)),
        Arguments.of(all, 1, List.of(List.of(), all)));
  }

  @ParameterizedTest(name = "{0} with {1} counter set(s)")
  @MethodSource("pools")
  void deviceSlicesCarryWhatTheDriverDeclares(
      List<String> declared, int counterSets, List<List<String>> perSlice) {
    var inv = inv("n1", devs(2));
    if (counterSets > 0) {
      inv = inv.withCounters(counterSet("gpu-0-counters"));
    }
    List<ResourceSlice> slices = slices(inv.build().withSkipNodeOperations(declared));
    assertThat(slices)
        .extracting(s -> NewerFields.skipNodeOperations(s.getSpec()))
        .isEqualTo(perSlice);
    assertThat(slices)
        .extracting(s -> s.getSpec().getAdditionalProperties().containsKey("skipNodeOperations"))
        .as("the field is left out, not written empty")
        .isEqualTo(perSlice.stream().map(ops -> !ops.isEmpty()).toList());
  }

  @ParameterizedTest(name = "{0} with {1} counter set(s)")
  @MethodSource("pools")
  void aChangedDeclarationIsNewContent(
      List<String> declared, int counterSets, List<List<String>> perSlice) {
    ResourceSlice without = slices(inv("n1", devs(2)).build()).get(0);
    ResourceSlice with = slices(inv("n1", devs(2)).build().withSkipNodeOperations(declared)).get(0);
    assertThat(SliceSemantics.sameContent(without, with)).isEqualTo(declared.isEmpty());
  }
}
