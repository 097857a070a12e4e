package io.kdra.devicedriver.discovery;

import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.MigParser.GpuInstance;
import io.kdra.devicedriver.discovery.MigParser.Placements;
import io.kdra.devicedriver.discovery.MigParser.Profile;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * MIG partitions of one MIG-enabled GPU as devices (KEP-4815 partitionable devices). Pure.
 *
 * <p>Dynamic: one counter set per GPU, {@code gpu-<index>-mig}, with one counter per memory slice
 * ({@code memory-slice-<n>}, value 1) and the engines of the largest profile ({@code
 * multiprocessors}, {@code copy-engines}, {@code decoders}, {@code encoders}, {@code jpeg-engines},
 * {@code ofa-engines}) and its {@code memory}. Each placement of each profile is a device that
 * consumes the memory slices it covers plus its own engines and memory; the whole GPU consumes
 * everything. Memory slices make overlapping placements exclusive (as the hardware does), the
 * engine counters bound what fits side by side, and the allocator keeps partitions and the whole
 * GPU consistent: 15 counters for the A100 and H100 (limit 32 per set), one consumption per device
 * (limit 2).
 *
 * <p>Static: each existing GPU instance is a device, without counters (the hardware is already
 * partitioned; no whole GPU is offered).
 *
 * <p>Device names: {@code gpu-<index>-mig-<profile without dots and pluses>-<start>}, e.g. {@code
 * gpu-0-mig-3g40gb-4}; attributes {@code type: mig}, {@code profile}, {@code migProfileId}, {@code
 * placementStart}, {@code parentIndex}, {@code parentUuid} plus the parent's product, architecture,
 * versions and PCI attributes, so constraints like matchAttribute on {@code
 * resource.kubernetes.io/pcieRoot} still work.
 */
public final class MigDevices {
  static final List<String> INHERITED =
      List.of(
          "productName",
          "architecture",
          "driverVersion",
          "cudaComputeCapability",
          "minor",
          "resource.kubernetes.io/pciBusID",
          "resource.kubernetes.io/pcieRoot");

  private MigDevices() {}

  /** The partitions, the counter set and the whole GPU consuming all of it. */
  public record Partitioned(List<NodeDevice> devices, CounterSet counters) {}

  public static String counterSetName(NodeDevice gpu) {
    return gpu.name() + "-mig";
  }

  /**
   * @param gpu the whole GPU as {@link NvidiaDevices#device} built it
   * @param profiles this GPU's profiles ({@code -lgip} rows with its index)
   * @param placements this GPU's placements ({@code -lgipp} lines with its index)
   * @throws DiscoveryException when a profile has no placements or the other way round
   */
  public static Partitioned dynamic(
      NodeDevice gpu, int index, List<Profile> profiles, List<Placements> placements)
      throws DiscoveryException {
    List<Profile> mine = profiles.stream().filter(p -> p.gpu() == index).toList();
    if (mine.isEmpty()) {
      throw new DiscoveryException(
          "nvidia-smi mig -lgip lists no profiles for MIG-enabled GPU " + index);
    }
    int slices = 0;
    for (Placements p : placements) {
      if (p.gpu() == index) {
        for (int s : p.starts()) {
          slices = Math.max(slices, s + p.size());
        }
      }
    }
    Profile largest =
        mine.stream()
            .max(
                Comparator.comparingInt(Profile::multiprocessors).thenComparing(Profile::memoryGiB))
            .orElseThrow();
    Map<String, Quantity> all = new LinkedHashMap<>();
    for (int s = 0; s < slices; s++) {
      all.put(slice(s), Quantity.of(1));
    }
    all.putAll(engines(largest));
    String set = counterSetName(gpu);
    List<NodeDevice> devices = new ArrayList<>();
    for (Profile p : mine) {
      Placements where =
          placements.stream()
              .filter(x -> x.gpu() == index && x.profileId() == p.id())
              .findFirst()
              .orElseThrow(
                  () ->
                      new DiscoveryException(
                          "nvidia-smi mig -lgipp lists no placements"
                              + " for profile "
                              + p.name()
                              + " (ID "
                              + p.id()
                              + ") of GPU "
                              + index));
      for (int start : where.starts()) {
        Map<String, Quantity> consumed = new LinkedHashMap<>();
        for (int s = start; s < start + where.size(); s++) {
          consumed.put(slice(s), Quantity.of(1));
        }
        // only what the set has: an engine the largest profile lacks is not counted at all
        engines(p)
            .forEach(
                (k, v) -> {
                  if (all.containsKey(k)) {
                    consumed.put(k, v);
                  }
                });
        devices.add(
            partition(
                gpu,
                index,
                p.name(),
                p.id(),
                start,
                p,
                List.of(new NodeDevice.CounterConsumption(set, consumed))));
      }
    }
    devices.add(
        new NodeDevice(
            gpu.name(),
            gpu.attributes(),
            gpu.capacity(),
            List.of(new NodeDevice.CounterConsumption(set, all)),
            gpu.health(),
            gpu.healthMessage(),
            gpu.deviceNodes(),
            gpu.env()));
    return new Partitioned(devices, new CounterSet(set, all));
  }

  /** The existing GPU instances of this GPU as devices. */
  public static List<NodeDevice> existing(
      NodeDevice gpu, int index, List<Profile> profiles, List<GpuInstance> instances) {
    List<NodeDevice> out = new ArrayList<>();
    for (GpuInstance gi : instances) {
      if (gi.gpu() != index) {
        continue;
      }
      Optional<Profile> p =
          profiles.stream().filter(x -> x.gpu() == index && x.id() == gi.profileId()).findFirst();
      NodeDevice d =
          partition(
              gpu, index, gi.profile(), gi.profileId(), gi.start(), p.orElse(null), List.of());
      Map<String, AttributeValue> a = new LinkedHashMap<>(d.attributes());
      a.put("migInstanceId", new AttributeValue.IntValue(gi.id()));
      out.add(
          new NodeDevice(
              d.name(),
              a,
              d.capacity(),
              List.of(),
              d.health(),
              d.healthMessage(),
              d.deviceNodes(),
              d.env()));
    }
    return out;
  }

  /** The device name of a partition. */
  public static String name(String gpu, String profile, int start) {
    return gpu
        + "-mig-"
        + profile.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "")
        + "-"
        + start;
  }

  private static NodeDevice partition(
      NodeDevice gpu,
      int index,
      String profile,
      int profileId,
      int start,
      Profile p,
      List<NodeDevice.CounterConsumption> consumes) {
    Map<String, AttributeValue> a = new LinkedHashMap<>();
    a.put("type", new AttributeValue.StringValue("mig"));
    a.put("profile", new AttributeValue.StringValue(profile));
    a.put("migProfileId", new AttributeValue.IntValue(profileId));
    a.put("placementStart", new AttributeValue.IntValue(start));
    a.put("parentIndex", new AttributeValue.IntValue(index));
    if (gpu.attributes().get("uuid") != null) {
      a.put("parentUuid", gpu.attributes().get("uuid"));
    }
    for (String k : INHERITED) {
      if (gpu.attributes().containsKey(k)) {
        a.put(k, gpu.attributes().get(k));
      }
    }
    Map<String, Quantity> capacity = new LinkedHashMap<>();
    if (p != null) {
      capacity.put("memory", memory(p));
      capacity.put("multiprocessors", Quantity.of(p.multiprocessors()));
    }
    return new NodeDevice(
        name(gpu.name(), profile, start),
        a,
        capacity,
        consumes,
        gpu.health(),
        gpu.healthMessage(),
        gpu.deviceNodes(),
        Map.of());
  }

  private static Map<String, Quantity> engines(Profile p) {
    Map<String, Quantity> m = new LinkedHashMap<>();
    m.put("multiprocessors", Quantity.of(p.multiprocessors()));
    m.put("copy-engines", Quantity.of(p.copyEngines()));
    m.put("decoders", Quantity.of(p.decoders()));
    m.put("encoders", Quantity.of(p.encoders()));
    m.put("jpeg-engines", Quantity.of(p.jpegEngines()));
    m.put("ofa-engines", Quantity.of(p.ofaEngines()));
    m.put("memory", memory(p));
    // zero counters say nothing and only cost entries of the 32 allowed
    m.values().removeIf(q -> q.sign() == 0);
    return m;
  }

  /** nvidia-smi prints GiB with two decimals; whole MiB, rounded down, never over-state it. */
  static Quantity memory(Profile p) {
    BigDecimal mib =
        p.memoryGiB().multiply(BigDecimal.valueOf(1024)).setScale(0, RoundingMode.FLOOR);
    return Quantity.parse(mib.toPlainString() + "Mi");
  }

  private static String slice(int s) {
    return "memory-slice-" + s;
  }
}
