package io.kdra.devicedriver.discovery;

import io.kdra.core.model.AttributeValue;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Google TPU chips from the device tree: {@code /dev/accel<N>} (one per chip, N is the chip index),
 * or for newer TPUs that use VFIO, the numbered groups in {@code /dev/vfio/} (index = position in
 * numeric order). The accelerator type and topology come from configuration or the GKE node labels
 * {@code cloud.google.com/gke-tpu-accelerator} and {@code cloud.google.com/gke-tpu-topology}.
 *
 * <p>Attributes follow Google's TPU DRA driver: {@code index}, {@code tpuGen}, {@code brand},
 * {@code accelerator}, {@code chipCount}, {@code topology}, plus {@code type} = tpu. Facts that are
 * unknown are left out, never guessed.
 */
public final class TpuBackend implements DiscoveryBackend {
  static final String ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator";
  static final String TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology";
  private static final Pattern ACCEL = Pattern.compile("accel(\\d+)");
  private static final Pattern GROUP = Pattern.compile("\\d+");
  // GKE accelerator label to the generation name the TPU DRA driver publishes; v5e is "v5litepod".
  private static final Map<String, String> GENERATIONS =
      Map.of(
          "tpu-v4-podslice", "v4",
          "tpu-v5-lite-podslice", "v5litepod",
          "tpu-v5-lite-device", "v5litepod",
          "tpu-v5p-slice", "v5p",
          "tpu-v6e-slice", "v6e");
  private static final Pattern GENERATION = Pattern.compile("^tpu-(v\\d+[a-z]*)-");

  private final Path hostRoot;
  private final Optional<String> acceleratorType;
  private final Optional<String> topology;
  private final Supplier<Map<String, String>> nodeLabels;

  /**
   * @param nodeLabels read only when type or topology is not configured
   */
  public TpuBackend(
      Path hostRoot,
      Optional<String> acceleratorType,
      Optional<String> topology,
      Supplier<Map<String, String>> nodeLabels) {
    this.hostRoot = hostRoot;
    this.acceleratorType = acceleratorType;
    this.topology = topology;
    this.nodeLabels = nodeLabels;
  }

  @Override
  public String name() {
    return "tpu";
  }

  @Override
  public Inventory discover() throws DiscoveryException {
    Map<String, String> labels =
        acceleratorType.isPresent() && topology.isPresent() ? Map.of() : nodeLabels.get();
    Optional<String> type =
        acceleratorType.or(() -> Optional.ofNullable(labels.get(ACCELERATOR_LABEL)));
    Optional<String> topo = topology.or(() -> Optional.ofNullable(labels.get(TOPOLOGY_LABEL)));

    List<String> accel = nodes(hostRoot.resolve("dev"), ACCEL);
    boolean vfio = accel.isEmpty();
    List<String> chips = vfio ? nodes(hostRoot.resolve("dev/vfio"), GROUP) : accel;
    List<NodeDevice> devices = new ArrayList<>();
    for (int i = 0; i < chips.size(); i++) {
      String node = chips.get(i);
      int index = vfio ? i : Integer.parseInt(node.substring("accel".length()));
      Map<String, AttributeValue> a = new LinkedHashMap<>();
      a.put("type", new AttributeValue.StringValue("tpu"));
      a.put("index", new AttributeValue.IntValue(index));
      a.put("brand", new AttributeValue.StringValue("Google"));
      a.put("chipCount", new AttributeValue.IntValue(chips.size()));
      type.ifPresent(t -> a.put("accelerator", new AttributeValue.StringValue(t)));
      type.flatMap(TpuBackend::generation)
          .ifPresent(g -> a.put("tpuGen", new AttributeValue.StringValue(g)));
      topo.ifPresent(t -> a.put("topology", new AttributeValue.StringValue(t)));
      devices.add(
          new NodeDevice(
              "tpu-" + index,
              a,
              Map.of(),
              List.of(),
              NodeDevice.Health.HEALTHY,
              "",
              List.of(vfio ? "/dev/vfio/" + node : "/dev/" + node),
              Map.of()));
    }
    return new Inventory(
        devices, List.of(), vfio && !chips.isEmpty() ? List.of("/dev/vfio/vfio") : List.of());
  }

  static Optional<String> generation(String acceleratorType) {
    String known = GENERATIONS.get(acceleratorType);
    if (known != null) {
      return Optional.of(known);
    }
    Matcher m = GENERATION.matcher(acceleratorType);
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  private static List<String> nodes(Path dir, Pattern name) throws DiscoveryException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString())
          .filter(n -> name.matcher(n).matches())
          .sorted(Comparator.comparingLong(n -> Long.parseLong(n.replaceAll("\\D", ""))))
          .toList();
    } catch (IOException e) {
      throw new DiscoveryException("listing " + dir + ": " + e.getMessage(), e);
    }
  }
}
