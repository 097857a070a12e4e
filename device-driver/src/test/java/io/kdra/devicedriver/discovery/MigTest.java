package io.kdra.devicedriver.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.core.validation.Limits;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** MIG tables parsed from recorded nvidia-smi output, and the partitions built from them. */
class MigTest {
  static String sample(String name) {
    try (InputStream in = MigTest.class.getResourceAsStream("/nvidia-smi/mig/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void parsesTheA100ProfileTableWithBothRowsOfEachProfile() throws Exception {
    List<MigParser.Profile> profiles = MigParser.profiles(sample("a100-40gb-lgip.txt"));

    assertThat(profiles)
        .extracting(MigParser.Profile::name)
        .containsExactly("1g.5gb", "1g.5gb+me", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb");
    assertThat(profiles.get(3))
        .isEqualTo(
            new MigParser.Profile(
                0, "3g.20gb", 9, 2, 2, new BigDecimal("19.62"), 42, 2, 0, 3, 0, 0));
    assertThat(profiles.get(5).ofaEngines()).isEqualTo(1);
  }

  @Test
  void parsesPlacementsInstancesAndCreations() throws Exception {
    assertThat(MigParser.placements(sample("a100-40gb-lgipp.txt")))
        .contains(
            new MigParser.Placements(0, 14, List.of(0, 2, 4), 2),
            new MigParser.Placements(0, 0, List.of(0), 8));
    assertThat(MigParser.gpuInstances(sample("a100-40gb-lgi.txt")))
        .containsExactly(
            new MigParser.GpuInstance(0, "3g.20gb", 9, 1, 0, 4),
            new MigParser.GpuInstance(0, "2g.10gb", 14, 5, 4, 2),
            new MigParser.GpuInstance(0, "1g.5gb", 19, 13, 6, 1));
    assertThat(MigParser.computeInstances(sample("a100-40gb-lci.txt")))
        .containsExactly(new MigParser.ComputeInstance(0, 1, "3g.20gb", 2, 0));
    assertThat(MigParser.createdGpuInstance(sample("create-3g40gb.txt"))).hasValue(2);
    assertThat(MigParser.createdComputeInstance(sample("create-3g40gb.txt"))).hasValue(0);
    assertThat(MigParser.gpuInstances(sample("none.txt"))).isEmpty();
  }

  @Test
  void aBrokenRowIsAnErrorNamingTheLine() {
    String broken =
        sample("a100-40gb-lgip.txt")
            .replace("3g.20gb        9     2/2", "3g.20gb        9     2-2");
    assertThatThrownBy(() -> MigParser.profiles(broken))
        .hasMessageStartingWith("nvidia-smi mig -lgip line 15: not a GPU instance profile row");
    assertThatThrownBy(() -> MigParser.placements("GPU  0 Profile ID 9 Placements: 0,4:4"))
        .hasMessageStartingWith("nvidia-smi mig -lgipp line 1: not a placement line");
  }

  @Test
  void dynamicA100HasEveryPlacementAndTheWholeGpuOnOneCounterSet() throws Exception {
    Inventory inv =
        NvidiaBackend.inventory(
            sample("a100-40gb.csv"),
            Path.of("/nonexistent"),
            MigMode.DYNAMIC,
            new NvidiaBackend.MigTables(
                sample("a100-40gb-lgip.txt"), sample("a100-40gb-lgipp.txt"), ""));

    // 7 + 7 + 3 + 2 + 1 + 1 placements, and the whole GPU
    assertThat(inv.devices()).hasSize(22);
    CounterSet set = inv.sharedCounters().get(0);
    assertThat(set.name()).isEqualTo("gpu-0-mig");
    assertThat(set.counters())
        .hasSize(8 + 6)
        .containsEntry("memory-slice-7", Quantity.of(1))
        .containsEntry("multiprocessors", Quantity.of(98))
        .containsEntry("memory", Quantity.parse("40448Mi"))
        .doesNotContainKey("encoders"); // no A100 profile has one
    assertThat(set.counters().size())
        .isLessThanOrEqualTo(Limits.RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET);

    NodeDevice p = inv.device("gpu-0-mig-3g20gb-4").orElseThrow();
    assertThat(p.attributes())
        .containsEntry("profile", new AttributeValue.StringValue("3g.20gb"))
        .containsEntry("type", new AttributeValue.StringValue("mig"))
        .containsEntry("migProfileId", new AttributeValue.IntValue(9))
        .containsEntry("placementStart", new AttributeValue.IntValue(4))
        .containsEntry(
            "parentUuid",
            new AttributeValue.StringValue("GPU-4b0c2b8e-6f6e-4a8e-9d0e-3c1f2a7b9e01"))
        .containsEntry(
            "resource.kubernetes.io/pciBusID", new AttributeValue.StringValue("0000:07:00.0"));
    assertThat(p.capacity()).containsEntry("memory", Quantity.parse("20090Mi"));
    assertThat(p.consumesCounters())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.counterSet()).isEqualTo("gpu-0-mig");
              assertThat(c.counters())
                  .containsOnlyKeys(
                      "memory-slice-4",
                      "memory-slice-5",
                      "memory-slice-6",
                      "memory-slice-7",
                      "multiprocessors",
                      "copy-engines",
                      "decoders",
                      "memory");
            });
    NodeDevice whole = inv.device("gpu-0").orElseThrow();
    assertThat(whole.consumesCounters())
        .singleElement()
        .satisfies(c -> assertThat(c.counters()).isEqualTo(set.counters()));
    assertThat(whole.attributes()).containsEntry("migEnabled", new AttributeValue.BoolValue(true));
  }

  @Test
  void everyCombinationOfPartitionsThatFitsTheCountersFitsTheHardwarePlacements() throws Exception {
    Inventory inv =
        NvidiaBackend.inventory(
            sample("a100-40gb.csv"),
            Path.of("/nonexistent"),
            MigMode.DYNAMIC,
            new NvidiaBackend.MigTables(
                sample("a100-40gb-lgip.txt"), sample("a100-40gb-lgipp.txt"), ""));
    Map<String, Quantity> left = new HashMap<>(inv.sharedCounters().get(0).counters());
    // Greedy: take 4g.20gb at 0 and then whatever still fits; memory slices never overlap
    for (String name : List.of("gpu-0-mig-4g20gb-0", "gpu-0-mig-3g20gb-4")) {
      take(left, inv.device(name).orElseThrow());
    }
    for (NodeDevice d : inv.devices()) {
      assertThat(fits(left, d)).as(d.name()).isFalse(); // the GPU is full: 4g + 3g
    }
  }

  @Test
  void dynamicH100LeavesGpusWithoutMigAlone() throws Exception {
    Inventory inv =
        NvidiaBackend.inventory(
            sample("h100-80gb-2x.csv"),
            Path.of("/nonexistent"),
            MigMode.DYNAMIC,
            new NvidiaBackend.MigTables(
                sample("h100-80gb-lgip.txt"), sample("h100-80gb-lgipp.txt"), ""));

    assertThat(inv.sharedCounters()).extracting(CounterSet::name).containsExactly("gpu-0-mig");
    // 7 + 7 + 4 + 3 + 2 + 1 + 1 placements and the whole GPU 0, plus GPU 1 untouched
    assertThat(inv.devices()).hasSize(26 + 1);
    assertThat(inv.device("gpu-1").orElseThrow().consumesCounters()).isEmpty();
    assertThat(inv.device("gpu-0-mig-3g40gb-4").orElseThrow().capacity())
        .containsEntry("memory", Quantity.parse("40448Mi"))
        .containsEntry("multiprocessors", Quantity.of(60));
    assertThat(inv.device("gpu-0-mig-1g10gb-6")).isPresent();
    assertThat(inv.device("gpu-0-mig-7g80gb-0")).isPresent();
  }

  @Test
  void staticPublishesTheExistingInstancesOnly() throws Exception {
    Inventory inv =
        NvidiaBackend.inventory(
            sample("a100-40gb.csv"),
            Path.of("/nonexistent"),
            MigMode.STATIC,
            new NvidiaBackend.MigTables(
                sample("a100-40gb-lgip.txt"), "", sample("a100-40gb-lgi.txt")));

    assertThat(inv.devices())
        .extracting(NodeDevice::name)
        .containsExactly("gpu-0-mig-1g5gb-6", "gpu-0-mig-2g10gb-4", "gpu-0-mig-3g20gb-0");
    assertThat(inv.sharedCounters()).isEmpty();
    assertThat(inv.device("gpu-0-mig-2g10gb-4").orElseThrow().attributes())
        .containsEntry("migInstanceId", new AttributeValue.IntValue(5));
  }

  @Test
  void offKeepsMigEnabledGpusWhole() throws Exception {
    Inventory inv = NvidiaBackend.inventory(sample("a100-40gb.csv"), Path.of("/nonexistent"));

    assertThat(inv.devices()).extracting(NodeDevice::name).containsExactly("gpu-0");
  }

  private static boolean fits(Map<String, Quantity> left, NodeDevice d) {
    return d.consumesCounters().stream()
        .flatMap(c -> c.counters().entrySet().stream())
        .allMatch(e -> left.get(e.getKey()).compareTo(e.getValue()) >= 0);
  }

  private static void take(Map<String, Quantity> left, NodeDevice d) {
    assertThat(fits(left, d)).as(d.name()).isTrue();
    d.consumesCounters()
        .forEach(c -> c.counters().forEach((k, v) -> left.put(k, left.get(k).subtract(v))));
  }
}
