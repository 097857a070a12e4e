package io.kdra.devicedriver.prepare;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.cel.golang.GoQuote;
import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.CounterSet;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.plugin.ClaimRef;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Whether a claim may take its devices while other claims are still prepared on this node. The
 * allocator never gives a device to two claims at once, but the node can see both: a pod
 * force-deleted while its claim is prepared frees the device in the API at once, and the kubelet
 * may prepare the device's next claim before it unprepares the old one (kubernetes#141471). The
 * driver refuses such a prepare, with a message the kubelet's retry replaces once the old claim is
 * unprepared. Pure.
 *
 * <p>Conflicts, as the allocator counts them: the same device, unless it is shareable ({@code
 * allowMultipleAllocations}); and devices drawing on one counter set (a GPU and its MIG partitions)
 * beyond what the set has. adminAccess results take nothing and are taken from no one.
 */
public final class DeviceFence {
  private DeviceFence() {}

  /**
   * A claim and the devices it takes on this node.
   *
   * @param devices device names; none of them with adminAccess
   */
  public record Holder(ClaimRef claim, Set<String> devices) {
    public Holder {
      devices = Set.copyOf(devices);
    }

    /** What a prepared claim takes: its devices but those it got with adminAccess. */
    static Holder of(PreparedClaim c) {
      SortedSet<String> devices = new TreeSet<>();
      c.devices().stream().map(d -> d.deviceName()).filter(c::usesSetupOf).forEach(devices::add);
      return new Holder(c.claim(), devices);
    }
  }

  /** The devices the claim takes on this node: its results of this driver and pool, but admin. */
  public static SortedSet<String> taken(ResourceClaim claim, String driver, String pool) {
    SortedSet<String> out = new TreeSet<>();
    AllocationResult allocation =
        claim.getStatus() == null ? null : claim.getStatus().getAllocation();
    if (allocation == null || allocation.getDevices() == null) {
      return out;
    }
    for (DeviceRequestAllocationResult r :
        Objects.requireNonNullElse(
            allocation.getDevices().getResults(), List.<DeviceRequestAllocationResult>of())) {
      if (driver.equals(r.getDriver())
          && pool.equals(r.getPool())
          && r.getDevice() != null
          && !Boolean.TRUE.equals(r.getAdminAccess())) {
        out.add(r.getDevice());
      }
    }
    return out;
  }

  /**
   * The devices whose holders can stand in the way of {@code wanted}: the wanted devices and those
   * drawing on a counter set one of them draws on. Other claims need not be looked at.
   */
  public static Set<String> contested(Set<String> wanted, Inventory inventory) {
    Set<String> sets = new TreeSet<>();
    wanted.forEach(
        name ->
            inventory
                .device(name)
                .ifPresent(d -> d.consumesCounters().forEach(c -> sets.add(c.counterSet()))));
    Set<String> out = new TreeSet<>(wanted);
    for (NodeDevice d : inventory.devices()) {
      if (d.consumesCounters().stream().anyMatch(c -> sets.contains(c.counterSet()))) {
        out.add(d.name());
      }
    }
    return out;
  }

  /**
   * Why the claim {@code uid} cannot take {@code wanted} now; empty when it can.
   *
   * @param others the claims prepared or being prepared on this node (an entry of {@code uid}
   *     itself, e.g. one rebuilt from its spec, is skipped)
   */
  public static Optional<String> conflict(
      String uid, Set<String> wanted, Collection<Holder> others, Inventory inventory) {
    List<Holder> holders = others.stream().filter(h -> !h.claim().uid().equals(uid)).toList();
    for (String name : new TreeSet<>(wanted)) {
      boolean shareable =
          inventory.device(name).map(NodeDevice::allowMultipleAllocations).orElse(false);
      if (shareable) {
        continue;
      }
      for (Holder h : holders) {
        if (h.devices().contains(name)) {
          return Optional.of("device " + quote(name) + " is still prepared for claim " + h.claim());
        }
      }
    }
    for (String name : new TreeSet<>(wanted)) {
      Optional<NodeDevice> device = inventory.device(name);
      if (device.isEmpty()) {
        continue;
      }
      for (NodeDevice.CounterConsumption need : device.get().consumesCounters()) {
        Optional<String> over = overdrawn(device.get(), need, holders, inventory);
        if (over.isPresent()) {
          return over;
        }
      }
    }
    return Optional.empty();
  }

  /**
   * Whether {@code device}'s draw on one counter set, with the draws of the devices others hold,
   * exceeds the set; names the first holder whose device draws on the same counter.
   */
  private static Optional<String> overdrawn(
      NodeDevice device,
      NodeDevice.CounterConsumption need,
      List<Holder> holders,
      Inventory inventory) {
    Optional<CounterSet> set =
        inventory.sharedCounters().stream()
            .filter(s -> s.name().equals(need.counterSet()))
            .findFirst();
    if (set.isEmpty()) {
      return Optional.empty();
    }
    for (Map.Entry<String, Quantity> counter : need.counters().entrySet()) {
      Quantity has = set.get().counters().get(counter.getKey());
      if (has == null) {
        continue;
      }
      Quantity sum = counter.getValue();
      String firstHolder = null;
      for (Holder h : holders) {
        for (String held : new TreeSet<>(h.devices())) {
          Quantity draw = draw(inventory, held, need.counterSet(), counter.getKey());
          if (draw == null || held.equals(device.name())) {
            continue;
          }
          sum = sum.add(draw);
          if (firstHolder == null) {
            firstHolder =
                "device " + quote(held) + " of claim " + h.claim() + " still holds " + draw;
          }
        }
      }
      if (sum.compareTo(has) > 0) {
        return Optional.of(
            "device "
                + quote(device.name())
                + " needs "
                + counter.getKey()
                + " "
                + counter.getValue()
                + " of counter set "
                + quote(need.counterSet())
                + ", which has "
                + has
                + ", while "
                + firstHolder);
      }
    }
    return Optional.empty();
  }

  /** What a device draws of one counter of a set; null when it draws none (or is unknown). */
  private static Quantity draw(Inventory inventory, String device, String set, String counter) {
    return inventory.device(device).stream()
        .flatMap(d -> d.consumesCounters().stream())
        .filter(c -> c.counterSet().equals(set))
        .map(c -> c.counters().get(counter))
        .filter(Objects::nonNull)
        .findFirst()
        .orElse(null);
  }

  private static String quote(String s) {
    return GoQuote.string(s);
  }
}
