package io.kdra.devicedriver.discovery;

import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.core.model.Semver;
import io.kdra.devicedriver.discovery.NvidiaSmiParser.SmiGpu;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Maps one nvidia-smi GPU row to a device, with the attribute names NVIDIA's own DRA driver
 * publishes (so users' selectors carry over): {@code type}, {@code uuid}, {@code productName},
 * {@code architecture}, {@code driverVersion}, {@code cudaComputeCapability}, plus {@code index},
 * {@code minor}, {@code migEnabled}, and the standard {@code resource.kubernetes.io/pciBusID} and
 * {@code resource.kubernetes.io/pcieRoot}. Pure.
 */
public final class NvidiaDevices {
  private NvidiaDevices() {}

  /**
   * @param minor the device minor number (for {@code /dev/nvidia<minor>}), if known
   * @param pcieRoot the PCIe root complex, e.g. {@code pci0000:00}, if known
   */
  public static NodeDevice device(SmiGpu g, OptionalInt minor, Optional<String> pcieRoot) {
    Map<String, AttributeValue> a = new LinkedHashMap<>();
    a.put("type", new AttributeValue.StringValue("gpu"));
    a.put("index", new AttributeValue.IntValue(g.index()));
    a.put("uuid", new AttributeValue.StringValue(g.uuid()));
    g.name().ifPresent(n -> a.put("productName", new AttributeValue.StringValue(n)));
    g.driverVersion()
        .flatMap(NvidiaDevices::version)
        .ifPresent(v -> a.put("driverVersion", new AttributeValue.VersionValue(v)));
    g.computeCapability()
        .flatMap(NvidiaDevices::version)
        .ifPresent(
            v -> {
              a.put("cudaComputeCapability", new AttributeValue.VersionValue(v));
              architecture(v)
                  .ifPresent(n -> a.put("architecture", new AttributeValue.StringValue(n)));
            });
    g.migEnabled().ifPresent(m -> a.put("migEnabled", new AttributeValue.BoolValue(m)));
    g.pciBusId()
        .map(NvidiaDevices::busId)
        .ifPresent(
            b -> a.put("resource.kubernetes.io/pciBusID", new AttributeValue.StringValue(b)));
    pcieRoot.ifPresent(
        r -> a.put("resource.kubernetes.io/pcieRoot", new AttributeValue.StringValue(r)));
    minor.ifPresent(m -> a.put("minor", new AttributeValue.IntValue(m)));
    Map<String, Quantity> capacity = new LinkedHashMap<>();
    g.memoryMiB()
        .ifPresent(
            mib ->
                capacity.put(
                    "memory",
                    Quantity.of(
                        BigDecimal.valueOf(mib * 1024L * 1024L), Quantity.Format.BINARY_SI)));
    boolean healthy = g.problem().isEmpty();
    return new NodeDevice(
        "gpu-" + g.index(),
        a,
        capacity,
        List.of(),
        healthy ? NodeDevice.Health.HEALTHY : NodeDevice.Health.UNHEALTHY,
        healthy ? "" : "nvidia-smi reports " + g.problem(),
        minor.isPresent() ? List.of("/dev/nvidia" + minor.getAsInt()) : List.of(),
        Map.of());
  }

  /**
   * nvidia-smi's {@code 00000000:4F:00.0} (8-digit domain, upper case) to the sysfs form {@code
   * 0000:4f:00.0} that {@code resource.kubernetes.io/pciBusID} uses.
   */
  public static String busId(String smi) {
    String s = smi.toLowerCase(Locale.ROOT);
    int colon = s.indexOf(':');
    if (colon > 4) {
      s = s.substring(colon - 4);
    }
    return s;
  }

  /**
   * Versions as semver: {@code 550.127.05} becomes 550.127.5 (no leading zeros in semver), {@code
   * 9.0} becomes 9.0.0; anything else is left out rather than guessed.
   */
  static Optional<Semver> version(String text) {
    String[] parts = text.split("\\.");
    if (parts.length < 2 || parts.length > 3) {
      return Optional.empty();
    }
    long[] n = new long[3];
    try {
      for (int i = 0; i < parts.length; i++) {
        n[i] = Long.parseLong(parts[i]);
        if (n[i] < 0) {
          return Optional.empty();
        }
      }
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
    return Optional.of(Semver.parse(n[0] + "." + n[1] + "." + n[2]));
  }

  /** The architecture of a CUDA compute capability (NVIDIA's published table). */
  static Optional<String> architecture(Semver cc) {
    long major = cc.major();
    long minor = cc.minor();
    String arch;
    if (major == 7) {
      arch = minor == 5 ? "Turing" : "Volta";
    } else if (major == 8) {
      arch = minor == 9 ? "Ada Lovelace" : "Ampere";
    } else if (major == 9) {
      arch = "Hopper";
    } else if (major == 10 || major == 12) {
      arch = "Blackwell";
    } else if (major == 6) {
      arch = "Pascal";
    } else {
      return Optional.empty();
    }
    return Optional.of(arch);
  }
}
