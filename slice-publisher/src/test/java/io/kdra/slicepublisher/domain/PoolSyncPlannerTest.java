package io.kdra.slicepublisher.domain;

import static io.kdra.slicepublisher.domain.Fixtures.T0;
import static io.kdra.slicepublisher.domain.Fixtures.dev;
import static io.kdra.slicepublisher.domain.Fixtures.devs;
import static io.kdra.slicepublisher.domain.Fixtures.inv;
import static io.kdra.slicepublisher.domain.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.kdra.slicepublisher.domain.Fixtures.Dev;
import io.kdra.slicepublisher.domain.PoolSyncPlanner.Plan;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PoolSyncPlannerTest {

  private static final SlicePlanner PLANNER =
      new SlicePlanner(PlannerSettings.defaults(Fixtures.DRIVER));

  private static DesiredPool pool(List<Dev> devices) {
    return PLANNER.planPool(inv("n1", devices).build(), node("n1"), T0).orElseThrow();
  }

  /** What the API server would hold after storing the pool at {@code generation}. */
  private static List<ResourceSlice> stored(List<Dev> devices, long generation) {
    List<ResourceSlice> out = new ArrayList<>();
    int rv = 100;
    for (ResourceSlice s : pool(devices).toSlices(generation)) {
      s.getMetadata().setResourceVersion(String.valueOf(rv++));
      s.getMetadata().setUid("uid-" + s.getMetadata().getName());
      s.getMetadata().setCreationTimestamp("2026-01-01T00:00:00Z");
      out.add(s);
    }
    return out;
  }

  private static List<String> ops(Plan plan) {
    return plan.writes().stream()
        .map(
            w ->
                w.getClass().getSimpleName()
                    + " "
                    + w.name()
                    + (w instanceof SliceWrite.Delete ? "" : " g" + generationOf(w)))
        .toList();
  }

  private static long generationOf(SliceWrite w) {
    ResourceSlice s =
        w instanceof SliceWrite.Create c ? c.slice() : ((SliceWrite.Update) w).slice();
    return s.getSpec().getPool().getGeneration();
  }

  private static List<ResourceSlice> edit(
      List<ResourceSlice> slices, int index, UnaryOperator<ResourceSliceBuilder> change) {
    List<ResourceSlice> out = new ArrayList<>(slices);
    out.set(index, change.apply(new ResourceSliceBuilder(slices.get(index))).build());
    return out;
  }

  static Stream<Arguments> cases() {
    List<Dev> two = devs(2);
    List<Dev> many = devs(200);
    return Stream.of(
        Arguments.of(
            named("nothing stored: create at generation 0", two),
            List.of(),
            List.of("Create n1-gpu.kdra.io-0 g0")),
        Arguments.of(named("stored as desired: no writes", two), stored(two, 3), List.of()),
        Arguments.of(
            named("quantity spelled differently: no writes", two),
            edit(
                stored(two, 3),
                0,
                b ->
                    b.editSpec()
                        .editFirstDevice()
                        .addToCapacity(
                            "memory",
                            new io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacityBuilder()
                                .withValue(new io.fabric8.kubernetes.api.model.Quantity("81920Mi"))
                                .build())
                        .endDevice()
                        .endSpec()),
            List.of()),
        Arguments.of(
            named("metadata noise (resourceVersion, labels): no writes", two),
            edit(
                stored(two, 3),
                0,
                b ->
                    b.editMetadata()
                        .withResourceVersion("999")
                        .addToLabels("x", "y")
                        .endMetadata()),
            List.of()),
        Arguments.of(
            named(
                "a device changed: generation bumps",
                List.of(dev("gpu-000").withAttribute("model", "B200"), dev("gpu-001"))),
            stored(two, 3),
            List.of("Update n1-gpu.kdra.io-0 g4")),
        Arguments.of(
            named("a device added to a 2-slice pool: every slice at g+1", devs(201)),
            stored(many, 5),
            List.of("Update n1-gpu.kdra.io-0 g6", "Update n1-gpu.kdra.io-1 g6")),
        Arguments.of(
            named("pool shrinks to one slice: delete, then update", two),
            stored(many, 5),
            List.of("Delete n1-gpu.kdra.io-1", "Update n1-gpu.kdra.io-0 g6")),
        Arguments.of(
            named("a slice was deleted behind our back: recreate, no bump", many),
            stored(many, 5).subList(0, 1),
            List.of("Create n1-gpu.kdra.io-1 g5")),
        Arguments.of(
            named("half-done publication: finish it without another bump", many),
            edit(
                stored(many, 6),
                1,
                b ->
                    b.editSpec()
                        .editPool()
                        .withGeneration(5L)
                        .endPool()
                        .editFirstDevice()
                        .withName("old")
                        .endDevice()
                        .endSpec()),
            List.of("Update n1-gpu.kdra.io-1 g6")),
        Arguments.of(
            named("owner reference missing: update, bump", two),
            edit(stored(two, 1), 0, b -> b.editMetadata().withOwnerReferences().endMetadata()),
            List.of("Update n1-gpu.kdra.io-0 g2")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void cases(List<Dev> desired, List<ResourceSlice> actual, List<String> expected) {
    assertThat(ops(PoolSyncPlanner.plan(Optional.of(pool(desired)), actual))).isEqualTo(expected);
  }

  private static final PlannerSettings DEFAULTS = PlannerSettings.defaults(Fixtures.DRIVER);

  private static PlannerSettings unhealthyTaint(String key, String effect) {
    return new PlannerSettings(
        DEFAULTS.drivers(),
        key,
        effect,
        DEFAULTS.staleTaintKey(),
        DEFAULTS.staleTaintEffect(),
        DEFAULTS.staleTaintAfter(),
        DEFAULTS.staleRemoveAfter(),
        DEFAULTS.disconnectedTaintAfter(),
        List.of(),
        List.of());
  }

  private static List<Dev> withUnhealthy(List<Dev> devices, int index) {
    List<Dev> out = new ArrayList<>(devices);
    out.set(index, out.get(index).unhealthy("ecc"));
    return out;
  }

  private static Dev withAttributes(String name, int extra) {
    Dev d = dev(name);
    for (int i = 0; i < extra; i++) {
      d.withAttribute("a" + i, "x");
    }
    return d;
  }

  /** "slice field" of each refused slice's errors. */
  private static List<String> refusals(Plan plan) {
    return plan.refused().stream()
        .flatMap(r -> r.errors().stream().map(e -> r.name() + " " + e.field()))
        .toList();
  }

  static Stream<Arguments> invalidSlicesAreNotWritten() {
    List<Dev> two = devs(2);
    PlannerSettings badEffect = unhealthyTaint("kdra.io/unhealthy", "Sometimes");
    return Stream.of(
        Arguments.of(
            named("valid: nothing refused", DEFAULTS),
            withUnhealthy(two, 0),
            List.of(),
            List.of("Create n1-gpu.kdra.io-0 g0"),
            List.of()),
        Arguments.of(
            named("taint effect not supported", badEffect),
            withUnhealthy(two, 0),
            List.of(),
            List.of(),
            List.of("n1-gpu.kdra.io-0 spec.devices[0].taints[0].effect")),
        Arguments.of(
            named("taint key not a label name", unhealthyTaint("kdra.io/not valid", "NoSchedule")),
            withUnhealthy(two, 1),
            List.of(),
            List.of(),
            List.of("n1-gpu.kdra.io-0 spec.devices[1].taints[0].key")),
        Arguments.of(
            named("one bad slice of two: the other is still written", badEffect),
            withUnhealthy(devs(130), 129),
            List.of(),
            List.of("Create n1-gpu.kdra.io-0 g0"),
            List.of("n1-gpu.kdra.io-1 spec.devices[1].taints[0].effect")),
        Arguments.of(
            named("too many attributes (the converter bypassed)", DEFAULTS),
            List.of(withAttributes("gpu-000", 32)),
            List.of(),
            List.of(),
            List.of("n1-gpu.kdra.io-0 spec.devices[0]")),
        Arguments.of(
            named("an invalid update leaves the stored slice as it is", badEffect),
            withUnhealthy(two, 0),
            stored(two, 3),
            List.of(),
            List.of("n1-gpu.kdra.io-0 spec.devices[0].taints[0].effect")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource
  void invalidSlicesAreNotWritten(
      PlannerSettings settings,
      List<Dev> desired,
      List<ResourceSlice> actual,
      List<String> expectedWrites,
      List<String> expectedRefusals) {
    DesiredPool pool =
        new SlicePlanner(settings)
            .planPool(inv("n1", desired).build(), node("n1"), T0)
            .orElseThrow();
    Plan plan = PoolSyncPlanner.plan(Optional.of(pool), actual);
    assertThat(ops(plan)).isEqualTo(expectedWrites);
    assertThat(refusals(plan)).isEqualTo(expectedRefusals);
  }

  @Test
  void aRefusedSliceNamesTheFieldAndUpstreamsMessage() {
    DesiredPool pool =
        new SlicePlanner(unhealthyTaint("kdra.io/unhealthy", "Sometimes"))
            .planPool(inv("n1", withUnhealthy(devs(1), 0)).build(), node("n1"), T0)
            .orElseThrow();
    assertThat(PoolSyncPlanner.plan(Optional.of(pool), List.of()).refused())
        .singleElement()
        .satisfies(
            r ->
                assertThat(r.errors())
                    .singleElement()
                    .hasToString(
                        "ResourceSlice n1-gpu.kdra.io-0: spec.devices[0].taints[0].effect: Unsupported value:"
                            + " \"Sometimes\": supported values: \"NoExecute\", \"NoSchedule\", \"None\""));
  }

  @Test
  void applyingThePlanConvergesToNoWrites() {
    List<ResourceSlice> actual = stored(devs(200), 5);
    Plan plan = PoolSyncPlanner.plan(Optional.of(pool(devs(300))), actual);
    List<ResourceSlice> after = new ArrayList<>();
    for (SliceWrite w : plan.writes()) {
      after.add(w instanceof SliceWrite.Create c ? c.slice() : ((SliceWrite.Update) w).slice());
    }
    assertThat(plan.generation()).isEqualTo(6);
    assertThat(PoolSyncPlanner.plan(Optional.of(pool(devs(300))), after).writes()).isEmpty();
  }

  @Test
  void unwantedPoolIsDeletedWithPreconditions() {
    Plan plan = PoolSyncPlanner.plan(Optional.empty(), stored(devs(200), 2));
    assertThat(plan.writes())
        .containsExactly(
            new SliceWrite.Delete("n1-gpu.kdra.io-0", "uid-n1-gpu.kdra.io-0", "100"),
            new SliceWrite.Delete("n1-gpu.kdra.io-1", "uid-n1-gpu.kdra.io-1", "101"));
  }

  @Test
  void taintTimeAddedByTheServerIsNeitherAChangeNorLost() {
    List<Dev> sick = List.of(dev("gpu-000").unhealthy("ecc"), dev("gpu-001"));
    List<ResourceSlice> actual =
        edit(
            stored(sick, 1),
            0,
            b ->
                b.editSpec()
                    .editFirstDevice()
                    .editFirstTaint()
                    .withTimeAdded("2026-01-01T00:00:05Z")
                    .endTaint()
                    .endDevice()
                    .endSpec());
    assertThat(PoolSyncPlanner.plan(Optional.of(pool(sick)), actual).writes()).isEmpty();

    List<Dev> sickAndChanged =
        List.of(dev("gpu-000").unhealthy("ecc"), dev("gpu-001").withAttribute("model", "B200"));
    var update =
        (SliceWrite.Update)
            PoolSyncPlanner.plan(Optional.of(pool(sickAndChanged)), actual).writes().get(0);
    assertThat(update.slice().getSpec().getDevices().get(0).getTaints().get(0).getTimeAdded())
        .isEqualTo("2026-01-01T00:00:05Z");
    assertThat(update.slice().getMetadata().getResourceVersion()).isEqualTo("100");
  }
}
