package io.kdra.devicedriver.discovery;

import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Everything one node has now, as one discovery pass found it. Devices are sorted by name, so two
 * passes over unchanged hardware give equal inventories (and the publisher sees no change).
 *
 * @param devices the devices, sorted by name
 * @param sharedCounters counter sets partitionable devices consume from
 * @param commonDeviceNodes control device nodes every container using any device needs (e.g. {@code
 *     /dev/nvidiactl}); they go into the top-level edits of each CDI spec
 */
public record Inventory(
    List<NodeDevice> devices, List<CounterSet> sharedCounters, List<String> commonDeviceNodes) {

  /** An inventory without devices. */
  public static final Inventory EMPTY = new Inventory(List.of(), List.of(), List.of());

  /**
   * @throws IllegalArgumentException when two devices or two counter sets share a name
   */
  public Inventory {
    devices = devices.stream().sorted(Comparator.comparing(NodeDevice::name)).toList();
    sharedCounters =
        sharedCounters.stream().sorted(Comparator.comparing(CounterSet::name)).toList();
    commonDeviceNodes = List.copyOf(commonDeviceNodes);
    Set<String> seen = new HashSet<>();
    for (NodeDevice d : devices) {
      if (!seen.add(d.name())) {
        throw new IllegalArgumentException("duplicate device name " + d.name());
      }
    }
    seen.clear();
    for (CounterSet c : sharedCounters) {
      if (!seen.add(c.name())) {
        throw new IllegalArgumentException("duplicate counter set name " + c.name());
      }
    }
  }

  /** An inventory of these devices and no counters. */
  public static Inventory of(List<NodeDevice> devices) {
    return new Inventory(devices, List.of(), List.of());
  }

  /** The device with this name, if the node has it. */
  public Optional<NodeDevice> device(String name) {
    return devices.stream().filter(d -> d.name().equals(name)).findFirst();
  }
}
