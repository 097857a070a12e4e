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
   * The stream of {@code driver} on {@code node} ended at {@code when}, after its snapshot {@code
   * lastSequence} was accepted: marks that snapshot disconnected if it is still the current one
   * (same sequence, not marked yet). A newer stream's snapshot (a restarted driver) or an earlier
   * mark of the same end leaves the store as it is. Atomic.
   *
   * @return the marked inventory, empty when nothing was marked
   */
  public Optional<NodeInventory> streamEnded(
      String driver, String node, long lastSequence, Instant when) {
    NodeInventory[] marked = new NodeInventory[1];
    latest.computeIfPresent(
        new Key(driver, node),
        (k, current) -> {
          if (current.sequence() != lastSequence || current.disconnectedAt().isPresent()) {
            return current;
          }
          marked[0] = current.disconnectedAt(when);
          return marked[0];
        });
    return Optional.ofNullable(marked[0]);
  }

  /** Forgets one inventory, unless a newer one of the same driver and node replaced it. */
  public void remove(NodeInventory inventory) {
    latest.remove(new Key(inventory.driver(), inventory.nodeName()), inventory);
  }

  public int size() {
    return latest.size();
  }
}
