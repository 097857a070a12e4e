package io.kdra.core.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The generator is deterministic per seed and, over a few hundred seeds, produces every shape the
 * differential test relies on.
 */
class ScenarioGeneratorTest {

  static final List<GeneratedScenario> MANY =
      LongStream.range(0, 300).mapToObj(ScenarioGenerator::generate).toList();

  @Test
  void sameSeedSameScenario() {
    assertThat(ScenarioGenerator.generate(42).yaml())
        .isEqualTo(ScenarioGenerator.generate(42).yaml());
    assertThat(ScenarioGenerator.generate(42).yaml())
        .isNotEqualTo(ScenarioGenerator.generate(43).yaml());
  }

  /**
   * Seeds quoted in docs/dev/oracles.md must replay: each profile's scenarios for seeds 1-500 are
   * pinned by a digest, so that no change to the generator silently alters them (a new shape
   * belongs in another profile).
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(ScenarioGenerator.Profile.class)
  void seedsStayReplayable(ScenarioGenerator.Profile profile) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    for (long seed = 1; seed <= 500; seed++) {
      sha.update(ScenarioGenerator.generate(seed, profile).yaml().getBytes(StandardCharsets.UTF_8));
    }
    assertThat(HexFormat.of().formatHex(sha.digest())).isEqualTo(DIGESTS.get(profile));
  }

  static final String BASIC_DIGEST =
      "b0ea6c5992459d7aabb3cee929bb830d29b24d2d515d8364e00e1d9a439f01fe";

  static final Map<ScenarioGenerator.Profile, String> DIGESTS =
      Map.of(
          ScenarioGenerator.Profile.BASIC,
          BASIC_DIGEST,
          ScenarioGenerator.Profile.EXTENDED,
          "c5e594cfd0651b70164a9c14a632f5636ca8385a5ff11ccbde00f068a3dd2e08",
          ScenarioGenerator.Profile.SHARED,
          "c934945b5cfbea5e706e1790ca2137396a2761acff89dc4e4b76046df9913135",
          ScenarioGenerator.Profile.ALPHA,
          "d55297b74ae5ecff93eea67b7644144a66eaf741624e90020dc8b6af789c7bd3",
          ScenarioGenerator.Profile.NEWER,
          "12df2793689d1913a3dbcd11ebd640e676a3dd0d352d95feda2859247ce4b2da");

  /**
   * The newer profile: skipNodeOperations, nodes' declaredFeatures, partitionTypeAttribute and
   * nodeAllocatableResources on the extended scenario, decided under gates drawn per seed.
   */
  @Test
  void newerProfileDrawsThe137SliceDeviceAndNodeFieldsAndItsGates() {
    List<GeneratedScenario> newer =
        LongStream.range(1, 201)
            .mapToObj(seed -> ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.NEWER))
            .toList();
    java.util.function.ToLongFunction<Predicate<String>> n =
        p -> newer.stream().map(GeneratedScenario::yaml).filter(p).count();
    assertThat(n.applyAsLong(y -> y.contains("skipNodeOperations:"))).isGreaterThan(100);
    assertThat(n.applyAsLong(y -> y.matches("(?s).*skipNodeOperations:\n *- [\"']?\\*.*")))
        .as("skip all")
        .isGreaterThan(20);
    assertThat(n.applyAsLong(y -> y.contains("declaredFeatures:"))).isGreaterThan(100);
    assertThat(n.applyAsLong(y -> y.contains("partitionTypeAttribute:"))).isGreaterThan(10);
    assertThat(n.applyAsLong(y -> y.contains("nodeAllocatableResources:"))).isGreaterThan(50);
    java.util.Map<String, Long> gates =
        newer.stream()
            .collect(
                java.util.stream.Collectors.groupingBy(
                    GeneratedScenario::featureGates, java.util.stream.Collectors.counting()));
    assertThat(gates)
        .containsOnlyKeys("DRAOptionalNodeOperations=true", "DRADerivedAttributes=true", "");
    assertThat(gates.values()).allMatch(c -> c > 30);
    // the extended scenario underneath: same slices and claims; other profiles keep their gates
    for (long seed = 1; seed < 20; seed++) {
      var a = ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.NEWER);
      var e = ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.EXTENDED);
      assertThat(a.slices().stream().map(x -> x.getMetadata().getName()).toList())
          .isEqualTo(e.slices().stream().map(x -> x.getMetadata().getName()).toList());
      assertThat(a.claims().size()).isEqualTo(e.claims().size());
      assertThat(e.featureGates()).isEmpty();
      assertThat(ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.ALPHA).featureGates())
          .isEqualTo(ScenarioGenerator.Profile.ALPHA.featureGates());
    }
  }

  @Test
  void alphaProfileDrawsThe137AlphaFieldsOnTheExtendedScenario() {
    List<String> alpha =
        LongStream.range(0, 300)
            .mapToObj(
                seed -> ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.ALPHA).yaml())
            .toList();
    java.util.function.ToLongFunction<Predicate<String>> n = p -> alpha.stream().filter(p).count();
    assertThat(n.applyAsLong(y -> y.contains("compatibilityGroups:")))
        .as("compatibility groups")
        .isGreaterThan(30);
    assertThat(n.applyAsLong(y -> y.contains("derivedAttributes:")))
        .as("derived attributes")
        .isGreaterThan(100);
    assertThat(n.applyAsLong(y -> y.contains("expression: \"[device.driver]\"")))
        .as("list-valued derived attributes")
        .isGreaterThan(5);
    assertThat(ScenarioGenerator.Profile.ALPHA.featureGates())
        .isEqualTo("DRADerivedAttributes=true,DRADeviceCompatibilityGroups=true");
    // the extended scenario underneath: same nodes and slice names
    for (long seed = 0; seed < 20; seed++) {
      var a = ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.ALPHA);
      var e = ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.EXTENDED);
      assertThat(a.slices().stream().map(x -> x.getMetadata().getName()).toList())
          .isEqualTo(e.slices().stream().map(x -> x.getMetadata().getName()).toList());
      assertThat(a.claims().size()).isEqualTo(e.claims().size());
    }
  }

  /**
   * DRAFractionalCapacityRange (beta and on in 1.37): the shared profile draws vGPUs whose cores
   * range is fractional, and requests that its milli-unit rounding decides.
   */
  @Test
  void sharedProfileDrawsFractionalCapacityRangesAndRequests() {
    List<String> shared =
        LongStream.range(1, 201)
            .mapToObj(
                seed -> ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.SHARED).yaml())
            .toList();
    java.util.function.ToLongFunction<Predicate<String>> n = p -> shared.stream().filter(p).count();
    assertThat(n.applyAsLong(y -> y.matches("(?s).*step: \"?(50m|0\\.25|125m)\"?\n.*")))
        .as("fractional ranges")
        .isGreaterThan(20);
    assertThat(n.applyAsLong(y -> y.matches("(?s).*cores: \"?(130m|0\\.3|275m)\"?\n.*")))
        .as("requests off a fractional step")
        .isGreaterThan(5);
  }

  /** The scenario with the shared profile's fractional {@code cores} capacity and requests cut. */
  private static GeneratedScenario withoutFractionalCores(GeneratedScenario s) {
    s.slices()
        .forEach(
            slice ->
                (slice.getSpec().getDevices() == null
                        ? java.util.List.<io.fabric8.kubernetes.api.model.resource.v1.Device>of()
                        : slice.getSpec().getDevices())
                    .stream()
                        .filter(d -> d.getName().startsWith("vgpu"))
                        .forEach(d -> d.getCapacity().remove("cores")));
    for (var c : s.claims()) {
      for (var r : c.getSpec().getDevices().getRequests()) {
        if (r.getExactly() != null) {
          r.getExactly().setCapacity(withoutCores(r.getExactly().getCapacity()));
        }
        r.getFirstAvailable().forEach(sub -> sub.setCapacity(withoutCores(sub.getCapacity())));
      }
    }
    return s;
  }

  private static io.fabric8.kubernetes.api.model.resource.v1.CapacityRequirements withoutCores(
      io.fabric8.kubernetes.api.model.resource.v1.CapacityRequirements req) {
    if (req == null || req.getRequests() == null) {
      return req;
    }
    java.util.Map<String, io.fabric8.kubernetes.api.model.Quantity> m =
        new java.util.LinkedHashMap<>(req.getRequests());
    m.remove("cores");
    if (m.isEmpty()) {
      return null;
    }
    req.setRequests(m);
    return req;
  }

  @Test
  void yamlNamesTheSeedAndEveryObject() {
    GeneratedScenario s = ScenarioGenerator.generate(7);
    String yaml = s.yaml();
    assertThat(yaml).startsWith("# generated scenario, seed 7\n");
    assertThat(yaml.split("\n---\n|^---\n", -1)).hasSize(s.objects().size() + 1);
    assertThat(yaml)
        .contains("kind: ResourceSlice", "kind: DeviceClass", "kind: ResourceClaim", "kind: Node");
  }

  @Test
  void coversEveryShape() {
    assertThat(count(y -> y.contains("int: "))).as("int attributes").isPositive();
    assertThat(count(y -> y.contains("bool: "))).as("bool attributes").isPositive();
    assertThat(count(y -> y.contains("string: "))).as("string attributes").isPositive();
    assertThat(count(y -> y.contains("version: "))).as("version attributes").isPositive();
    assertThat(count(y -> y.contains("allocationMode: All"))).as("All").isGreaterThan(10);
    assertThat(count(y -> y.contains("firstAvailable:"))).as("firstAvailable").isGreaterThan(30);
    assertThat(count(y -> y.contains("matchAttribute:"))).as("matchAttribute").isGreaterThan(30);
    assertThat(count(y -> y.contains("distinctAttribute:"))).as("distinctAttribute").isPositive();
    assertThat(count(y -> y.contains("sharedCounters:"))).as("counters").isGreaterThan(30);
    assertThat(count(y -> y.contains("allowMultipleAllocations: true")))
        .as("shareable")
        .isGreaterThan(30);
    assertThat(count(y -> y.contains("taints:"))).as("taints").isGreaterThan(10);
    assertThat(count(y -> y.contains("tolerations:"))).as("tolerations").isGreaterThan(10);
    assertThat(count(y -> y.contains("allNodes: true"))).as("allNodes").isPositive();
    assertThat(count(y -> y.contains("nodeSelector:\n    nodeSelectorTerms")))
        .as("network-attached by selector")
        .isPositive();
    assertThat(count(y -> y.contains("resourceClaimTemplateName:"))).as("templates").isPositive();
    assertThat(count(y -> y.contains("kind: Pod"))).as("pods").isGreaterThan(50);
    assertThat(MANY.stream().filter(s -> !s.allocatedClaims().isEmpty()).count())
        .as("claims allocated before the run")
        .isGreaterThan(100);
    assertThat(MANY.stream().filter(ScenarioGeneratorTest::hasIncompletePool).count())
        .as("incomplete pools")
        .isGreaterThan(5);
    assertThat(
            MANY.stream()
                .filter(
                    s ->
                        s.slices().stream()
                            .anyMatch(x -> x.getMetadata().getName().endsWith("-gpu-old")))
                .count())
        .as("stale generations")
        .isGreaterThan(5);
    assertThat(
            MANY.stream()
                .filter(
                    s ->
                        s.slices().stream()
                                .map(x -> x.getSpec().getPool().getName())
                                .distinct()
                                .count()
                            < s.slices().size())
                .count())
        .as("pools over several slices")
        .isGreaterThan(100);
  }

  @Test
  void extendedProfileAddsItsShapesToTheBasicScenario() {
    List<String> ext =
        LongStream.range(0, 300)
            .mapToObj(
                seed -> ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.EXTENDED).yaml())
            .toList();
    java.util.function.ToLongFunction<Predicate<String>> n = p -> ext.stream().filter(p).count();
    assertThat(n.applyAsLong(y -> y.contains("adminAccess: true")))
        .as("adminAccess")
        .isGreaterThan(30);
    assertThat(n.applyAsLong(y -> y.contains("bindingConditions:")))
        .as("binding conditions")
        .isGreaterThan(30);
    assertThat(n.applyAsLong(y -> y.contains("bindsToNode: true")))
        .as("bindsToNode")
        .isGreaterThan(20);
    assertThat(n.applyAsLong(y -> y.contains("perDeviceNodeSelection: true")))
        .as("per-device node selection")
        .isGreaterThan(100);
    assertThat(n.applyAsLong(y -> y.contains("tolerationSeconds:")))
        .as("tolerationSeconds")
        .isGreaterThan(10);
    assertThat(n.applyAsLong(y -> y.contains("kind: Pod") && y.contains("  nodeName: ")))
        .as("pods with a node name")
        .isGreaterThan(10);
    assertThat(n.applyAsLong(y -> y.contains("requiredDuringSchedulingIgnoredDuringExecution")))
        .as("pods with required node affinity")
        .isGreaterThan(10);
    // the basic stream is untouched: the same nodes and claims, in the same order
    for (long seed = 0; seed < 20; seed++) {
      GeneratedScenario b = ScenarioGenerator.generate(seed);
      GeneratedScenario e = ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.EXTENDED);
      assertThat(e.nodes()).isEqualTo(b.nodes());
      assertThat(e.claims().stream().map(c -> c.getMetadata().getName()).toList())
          .isEqualTo(b.claims().stream().map(c -> c.getMetadata().getName()).toList());
    }
  }

  @Test
  void sharedProfileAddsClaimSharingToTheExtendedScenario() {
    List<GeneratedScenario> shared =
        LongStream.range(0, 300)
            .mapToObj(seed -> ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.SHARED))
            .toList();
    assertThat(
            shared.stream()
                .filter(
                    s ->
                        s.pods().stream()
                            .anyMatch(
                                p ->
                                    uses(p).stream()
                                        .anyMatch(
                                            c ->
                                                s.allocatedClaims().stream()
                                                    .anyMatch(
                                                        a -> a.getMetadata().getName().equals(c)))))
                .count())
        .as("pods using a claim allocated before the run")
        .isGreaterThan(100);
    assertThat(
            shared.stream()
                .filter(
                    s ->
                        s.pods().stream()
                            .flatMap(p -> uses(p).stream())
                            .collect(
                                java.util.stream.Collectors.groupingBy(
                                    c -> c, java.util.stream.Collectors.counting()))
                            .values()
                            .stream()
                            .anyMatch(n -> n > 1))
                .count())
        .as("claims used by two pods or more")
        .isGreaterThan(100);
    assertThat(
            shared.stream()
                .filter(
                    s ->
                        s.pods().stream()
                            .anyMatch(
                                p ->
                                    p.getMetadata().getName().startsWith("share-")
                                        && p.getSpec().getNodeName() != null))
                .count())
        .as("sharing pods with a node name")
        .isGreaterThan(10);
    // the extended scenario is untouched but for the vGPUs' fractional cores: the same inventory,
    // claims and the same pods first
    for (long seed = 0; seed < 20; seed++) {
      GeneratedScenario e = ScenarioGenerator.generate(seed, ScenarioGenerator.Profile.EXTENDED);
      GeneratedScenario s = withoutFractionalCores(shared.get((int) seed));
      assertThat(s.slices()).isEqualTo(e.slices());
      assertThat(s.nodes()).isEqualTo(e.nodes());
      assertThat(s.claims()).isEqualTo(e.claims());
      assertThat(
              s.pods().stream()
                  .map(p -> p.getMetadata().getName())
                  .filter(n -> !n.startsWith("share-"))
                  .toList())
          .isEqualTo(e.pods().stream().map(p -> p.getMetadata().getName()).toList());
    }
  }

  /** The names of the claims a pod uses by name. */
  static List<String> uses(io.fabric8.kubernetes.api.model.Pod pod) {
    return pod.getSpec().getResourceClaims().stream()
        .map(io.fabric8.kubernetes.api.model.PodResourceClaim::getResourceClaimName)
        .filter(java.util.Objects::nonNull)
        .toList();
  }

  static boolean hasIncompletePool(GeneratedScenario s) {
    return s.slices().stream()
        .anyMatch(
            x ->
                x.getSpec().getPool().getGeneration()
                        == s.slices().stream()
                            .filter(
                                y ->
                                    y.getSpec()
                                            .getPool()
                                            .getName()
                                            .equals(x.getSpec().getPool().getName())
                                        && y.getSpec().getDriver().equals(x.getSpec().getDriver()))
                            .mapToLong(y -> y.getSpec().getPool().getGeneration())
                            .max()
                            .orElse(0)
                    && s.slices().stream()
                            .filter(
                                y ->
                                    y.getSpec()
                                            .getPool()
                                            .getName()
                                            .equals(x.getSpec().getPool().getName())
                                        && y.getSpec().getDriver().equals(x.getSpec().getDriver())
                                        && y.getSpec()
                                            .getPool()
                                            .getGeneration()
                                            .equals(x.getSpec().getPool().getGeneration()))
                            .count()
                        < x.getSpec().getPool().getResourceSliceCount());
  }

  static long count(Predicate<String> p) {
    return MANY.stream().map(GeneratedScenario::yaml).filter(p).count();
  }
}
