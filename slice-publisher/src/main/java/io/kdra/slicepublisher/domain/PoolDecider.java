package io.kdra.slicepublisher.domain;

import io.kdra.slicepublisher.domain.PlannerSettings.NetworkPoolSpec;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Pure decisions about whole pools: whether one is left alone, removed or published (with {@link
 * SlicePlanner}'s content), and what a Node's change means for the stored inventories. The
 * reconciler fetches the inputs and carries out the outcome.
 *
 * <p>Rules:
 *
 * <ul>
 *   <li>A pool fed by a current inventory is published as {@link SlicePlanner#planPool} plans it,
 *       or removed when that plans nothing (silent past the removal grace, Node unknown, no
 *       devices).
 *   <li>A pool of a driver this publisher does not serve is left alone.
 *   <li>A pool with no inventory (after a restart or a leader change nobody has reported yet) is
 *       left alone until the removal grace has passed since writing started, so that a new leader
 *       does not wipe the cluster's devices before the drivers have reconnected; then it is
 *       removed. A node-local pool whose Node is gone is removed at once.
 *   <li>A Node that is gone takes its node-local inventories with it; a network pool's source node
 *       going away is left to the staleness timers, as its devices may still be reachable.
 * </ul>
 *
 * Thread-safe, stateless apart from the planner.
 */
public final class PoolDecider {

  private final SlicePlanner planner;

  public PoolDecider(SlicePlanner planner) {
    this.planner = Objects.requireNonNull(planner, "planner");
  }

  /**
   * The outcome for one pool.
   *
   * @param store the latest inventories
   * @param nodes the Nodes that exist, by name
   * @param writingSince when this replica started writing
   * @param now the current time
   */
  public PoolOutcome decide(
      PoolKey key,
      InventoryStore store,
      Function<String, Optional<NodeInfo>> nodes,
      Instant writingSince,
      Instant now) {
    PlannerSettings settings = planner.settings();
    Optional<NetworkPoolSpec> network =
        settings.networkPools().stream()
            .filter(p -> p.driver().equals(key.driver()) && p.name().equals(key.pool()))
            .findFirst();
    String sourceNode = network.map(NetworkPoolSpec::sourceNode).orElse(key.pool());
    Optional<NodeInventory> inventory =
        store
            .get(key.driver(), sourceNode)
            .filter(i -> planner.poolKeyOf(i.driver(), i.nodeName()).equals(key));
    if (inventory.isPresent()) {
      NodeInventory i = inventory.get();
      Optional<DesiredPool> pool = planner.planPool(i, nodes.apply(i.nodeName()).orElse(null), now);
      return pool.isPresent()
          ? new PoolOutcome.Publish(pool.get(), planner.nextChange(i, now))
          : new PoolOutcome.Remove();
    }
    if (!settings.drivers().contains(key.driver())) {
      return new PoolOutcome.Leave(Optional.empty());
    }
    boolean nodeGone = network.isEmpty() && nodes.apply(key.pool()).isEmpty();
    Instant graceEnd = writingSince.plus(settings.staleRemoveAfter());
    if (nodeGone || now.isAfter(graceEnd)) {
      return new PoolOutcome.Remove();
    }
    return new PoolOutcome.Leave(Optional.of(graceEnd));
  }

  /**
   * What a change of Node {@code node} means.
   *
   * @param current the Node as it is now, empty when it is gone
   * @param inventories the latest inventories
   */
  public NodeChange nodeChanged(
      String node, Optional<NodeInfo> current, Collection<NodeInventory> inventories) {
    List<NodeInventory> forget =
        current.isPresent()
            ? List.of()
            : inventories.stream()
                .filter(
                    i ->
                        i.nodeName().equals(node)
                            && planner.poolKeyOf(i.driver(), node).pool().equals(node))
                .toList();
    Set<PoolKey> recheck =
        planner.settings().drivers().stream()
            .map(d -> planner.poolKeyOf(d, node))
            .collect(Collectors.toSet());
    return new NodeChange(forget, recheck);
  }

  /**
   * @param forget the inventories that went with the Node
   * @param recheck the pools to plan again
   */
  public record NodeChange(List<NodeInventory> forget, Set<PoolKey> recheck) {
    public NodeChange {
      forget = List.copyOf(forget);
      recheck = Set.copyOf(recheck);
    }
  }
}
