package io.kdra.slicepublisher.domain;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The latest accepted inventory per (driver, node): the desired state. Thread-safe; gRPC streams
 * write, the reconciler reads. Holds no history: a snapshot replaces the previous one whole.
 */
public final class InventoryStore {

  private record Key(String driver, String node) {}

  private final Map<Key, NodeInventory> latest = new ConcurrentHashMap<>();

  /** Stores {@code inventory} as the latest of its driver and node. */
  public void put(NodeInventory inventory) {
    latest.put(new Key(inventory.driver(), inventory.nodeName()), inventory);
  }

  public Optional<NodeInventory> get(String driver, String node) {
    return Optional.ofNullable(latest.get(new Key(driver, node)));
  }

  /** A snapshot of all inventories (a copy; later puts do not show in it). */
  public Collection<NodeInventory> all() {
    return List.copyOf(latest.values());
  }

  /**
   * Records that the stream which sent {@code inventory} ended at {@code when}, unless a newer
   * snapshot of the same driver and node has replaced it (a restarted driver's new stream).
   *
   * @return whether it was recorded
   */
  public boolean disconnected(NodeInventory inventory, Instant when) {
    return latest.replace(new Key(inventory.driver(), inventory.nodeName()), inventory,
        inventory.disconnectedAt(when));
  }

  /** Forgets one inventory, unless a newer one of the same driver and node replaced it. */
  public void remove(NodeInventory inventory) {
    latest.remove(new Key(inventory.driver(), inventory.nodeName()), inventory);
  }

  public int size() {
    return latest.size();
  }
}
