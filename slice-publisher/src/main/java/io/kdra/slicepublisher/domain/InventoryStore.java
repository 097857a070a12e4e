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

  /**
   * Stores {@code inventory} as the latest of its driver and node, unless it is superseded: the
   * stored one has a higher sequence and its stream is still open. That is an older driver process
   * still reporting while its replacement already does (a driver upgrade with surge: both pods of
   * the node stream for a while); a driver's sequences start at its process's start, so the newer
   * process's are higher. Once the stored one's stream has ended any snapshot is taken (a restarted
   * driver whose clock stepped back). Atomic.
   *
   * @return whether it was stored
   */
  public boolean put(NodeInventory inventory) {
    boolean[] stored = new boolean[1];
    latest.compute(
        new Key(inventory.driver(), inventory.nodeName()),
        (k, current) -> {
          if (current != null
              && current.disconnectedAt().isEmpty()
              && current.sequence() > inventory.sequence()) {
            return current;
          }
          stored[0] = true;
          return inventory;
        });
    return stored[0];
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
