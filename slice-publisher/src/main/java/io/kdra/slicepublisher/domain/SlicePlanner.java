package io.kdra.slicepublisher.domain;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintBuilder;
import io.kdra.core.validation.Limits;
import io.kdra.slicepublisher.domain.DesiredPool.SliceContent;
import io.kdra.slicepublisher.domain.PlannerSettings.NetworkPoolSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Pure planning: latest inventories + nodes + settings -> desired pools and their slices.
 *
 * <p>Rules, each following upstream (resource.k8s.io/v1, Kubernetes 1.36 defaults):
 *
 * <ul>
 *   <li>One pool per (driver, node), named after the node, with {@code nodeName} set and the Node
 *       as controlling owner; or a network-attached pool when the settings say that this driver's
 *       snapshots on that node feed one ({@code nodeSelector} or {@code allNodes}).
 *   <li>Devices sorted by name, so that diffs stay small and slice contents are stable.
 *   <li>At most {@value Limits#RESOURCE_SLICE_MAX_DEVICES} devices per slice, and {@value
 *       Limits#RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES} in a slice where any device has
 *       taints or consumes counters (1.35+; also valid on 1.34).
 *   <li>Shared counters in slices of their own, at most {@value
 *       Limits#RESOURCE_SLICE_MAX_COUNTER_SETS} sets each (1.35+: a slice carries devices or
 *       sharedCounters, not both); they come first.
 *   <li>Unhealthy devices stay and get the configured taint, its value the health message.
 *   <li>A driver silent for longer than the taint grace gets the stale taint on every device; for
 *       longer than the removal grace its pool is not desired any more. A driver whose stream ended
 *       gets the stale taint, valued {@value #DISCONNECTED}, once the disconnect grace has passed
 *       without a new stream (a dead driver would otherwise keep getting pods placed on its node
 *       until the silence grace).
 *   <li>Configured node labels become string attributes of node-local devices; the driver's own
 *       attribute of the same name wins.
 * </ul>
 *
 * Thread-safe and deterministic: equal inputs give equal pools.
 */
public final class SlicePlanner {

  /** The stale taint's value when the driver's stream has ended. */
  public static final String DISCONNECTED = "disconnected";

  /** The reason {@link #stalePools} gives a pool whose driver is silent but still connected. */
  public static final String SILENT = "silent";

  /**
   * The stale taint's value, and the reason {@link #stalePools} gives, when the driver reports but
   * its discovery has not succeeded for longer than the settings allow.
   */
  public static final String DISCOVERY_STALE = "discovery-stale";

  private final PlannerSettings settings;

  public SlicePlanner(PlannerSettings settings) {
    this.settings = Objects.requireNonNull(settings, "settings");
  }

  public PlannerSettings settings() {
    return settings;
  }

  /** The pool that snapshots of {@code driver} on {@code node} feed. */
  public PoolKey poolKeyOf(String driver, String node) {
    return settings
        .networkPoolFedBy(driver, node)
        .map(p -> new PoolKey(driver, p.name()))
        .orElseGet(() -> new PoolKey(driver, node));
  }

  /**
   * All desired pools.
   *
   * @param inventories the latest snapshot per (driver, node)
   * @param nodes the nodes that exist, by name
   * @param now the current time, for the staleness rules
   */
  public Map<PoolKey, DesiredPool> plan(
      Collection<NodeInventory> inventories, Map<String, NodeInfo> nodes, Instant now) {
    Map<PoolKey, DesiredPool> result = new LinkedHashMap<>();
    for (NodeInventory inventory : inventories) {
      planPool(inventory, nodes.get(inventory.nodeName()), now)
          .ifPresent(p -> result.put(p.key(), p));
    }
    return result;
  }

  /** Whether the driver has been silent past the removal grace: its pool goes. */
  private boolean removedAsSilent(NodeInventory inventory, Instant now) {
    return Duration.between(inventory.receivedAt(), now).compareTo(settings.staleRemoveAfter()) > 0;
  }

  /**
   * The value of the stale taint the inventory's devices carry at {@code now}: {@value
   * #DISCONNECTED} once its stream has been ended for the disconnect grace, {@code ""} (no value)
   * once the driver has been silent for the taint grace, {@value #DISCOVERY_STALE} when the
   * snapshot's discovery was already stale when it arrived, empty while it is none of these.
   */
  public Optional<String> staleness(NodeInventory inventory, Instant now) {
    boolean disconnected =
        inventory
            .disconnectedAt()
            .filter(t -> Duration.between(t, now).compareTo(settings.disconnectedTaintAfter()) >= 0)
            .isPresent();
    if (disconnected) {
      return Optional.of(DISCONNECTED);
    }
    Duration silence = Duration.between(inventory.receivedAt(), now);
    if (silence.compareTo(settings.staleTaintAfter()) > 0) {
      return Optional.of("");
    }
    return discoveryStale(inventory) ? Optional.of(DISCOVERY_STALE) : Optional.empty();
  }

  /**
   * Whether the snapshot's discovery was older than {@code staleDiscoveryIntervals} of the driver's
   * intervals when it arrived. Judged at receipt, not now: between heartbeats (a minute by default)
   * a live driver's discovery ages by up to the heartbeat, which is no sign of trouble, and a
   * frozen one shows at its next heartbeat. A driver that says no discovery time or interval is not
   * judged.
   */
  private boolean discoveryStale(NodeInventory inventory) {
    return inventory
        .discovery()
        .filter(d -> !d.interval().isNegative() && !d.interval().isZero())
        .filter(
            d ->
                Duration.between(d.at(), inventory.receivedAt())
                        .compareTo(d.interval().multipliedBy(settings.staleDiscoveryIntervals()))
                    > 0)
        .isPresent();
  }

  /**
   * How many pools carry the stale taint at {@code now}, by reason ({@value #DISCONNECTED}, {@value
   * #SILENT} or {@value #DISCOVERY_STALE}): inventories of served drivers not yet removed for
   * silence. The driver behind each has stopped reporting, and the scheduler avoids its devices.
   */
  public Map<String, Long> stalePools(Collection<NodeInventory> inventories, Instant now) {
    Map<String, Long> result = new LinkedHashMap<>();
    result.put(DISCONNECTED, 0L);
    result.put(SILENT, 0L);
    result.put(DISCOVERY_STALE, 0L);
    for (NodeInventory inventory : inventories) {
      if (!settings.drivers().contains(inventory.driver()) || removedAsSilent(inventory, now)) {
        continue;
      }
      staleness(inventory, now)
          .ifPresent(value -> result.merge(value.isEmpty() ? SILENT : value, 1L, Long::sum));
    }
    return result;
  }

  /**
   * The desired pool fed by one inventory; empty when nothing should be published for it: the
   * driver is not served, the node is unknown (node-local pools), the driver has been silent past
   * the removal grace, or it reports neither devices nor counters.
   *
   * @param node the inventory's node, null when it does not exist
   */
  public Optional<DesiredPool> planPool(NodeInventory inventory, NodeInfo node, Instant now) {
    if (!settings.drivers().contains(inventory.driver())) {
      return Optional.empty();
    }
    if (removedAsSilent(inventory, now)) {
      return Optional.empty();
    }
    Optional<String> stale = staleness(inventory, now);
    Optional<NetworkPoolSpec> network =
        settings.networkPoolFedBy(inventory.driver(), inventory.nodeName());
    if (network.isEmpty() && node == null) {
      return Optional.empty();
    }
    Map<String, String> labels = network.isEmpty() ? node.labels() : Map.of();
    List<Device> devices =
        inventory.devices().stream()
            .sorted(Comparator.comparing(InventoryDevice::name))
            .map(d -> device(d, labels, stale))
            .toList();
    List<SliceContent> slices = new ArrayList<>();
    chunkCounters(inventory.sharedCounters()).forEach(c -> slices.add(SliceContent.ofCounters(c)));
    chunkDevices(devices).forEach(c -> slices.add(SliceContent.ofDevices(c)));
    if (slices.isEmpty()) {
      return Optional.empty();
    }
    if (network.isPresent()) {
      NetworkPoolSpec spec = network.get();
      NodeSelector selector = spec.nodeSelector().isEmpty() ? null : selector(spec.nodeSelector());
      return Optional.of(
          new DesiredPool(
              new PoolKey(inventory.driver(), spec.name()),
              null,
              selector,
              selector == null,
              null,
              slices,
              inventory.skipNodeOperations()));
    }
    return Optional.of(
        new DesiredPool(
            new PoolKey(inventory.driver(), node.name()),
            node.name(),
            null,
            false,
            owner(node),
            slices,
            inventory.skipNodeOperations()));
  }

  /**
   * The first instant, not before {@code now}, at which {@link #planPool} may plan {@code
   * inventory} differently by time alone: the silence taint, the removal, or the disconnect taint
   * coming due. Empty when none is ahead (the pool is already removed, or every timer has run).
   */
  public Optional<Instant> nextChange(NodeInventory inventory, Instant now) {
    Stream<Instant> silence =
        Stream.of(
            inventory.receivedAt().plus(settings.staleTaintAfter()),
            inventory.receivedAt().plus(settings.staleRemoveAfter()));
    Stream<Instant> disconnect =
        inventory.disconnectedAt().map(t -> t.plus(settings.disconnectedTaintAfter())).stream();
    return Stream.concat(silence, disconnect)
        .filter(t -> !t.isBefore(now))
        .min(Comparator.naturalOrder());
  }

  private Device device(
      InventoryDevice reported, Map<String, String> labels, Optional<String> stale) {
    Device in = reported.device();
    Map<String, DeviceAttribute> attributes = new TreeMap<>();
    for (String labelKey : settings.nodeLabelAttributes()) {
      String value = labels.get(labelKey);
      if (value != null) {
        attributes.put(
            attributeName(labelKey), new DeviceAttributeBuilder().withString(value).build());
      }
    }
    if (in.getAttributes() != null) {
      attributes.putAll(in.getAttributes());
    }
    List<DeviceTaint> taints = new ArrayList<>();
    if (!reported.healthy()) {
      taints.add(
          new DeviceTaintBuilder()
              .withKey(settings.unhealthyTaintKey())
              .withValue(labelValue(reported.healthMessage()))
              .withEffect(settings.unhealthyTaintEffect())
              .build());
    }
    stale.ifPresent(
        value ->
            taints.add(
                new DeviceTaintBuilder()
                    .withKey(settings.staleTaintKey())
                    .withValue(value.isEmpty() ? null : value)
                    .withEffect(settings.staleTaintEffect())
                    .build()));
    // A shallow copy with new attributes and taints: the reported parts are shared, never
    // modified (copy with DeviceBuilder before changing them). A DeviceBuilder deep copy here
    // was the largest cost of a steady-state sync.
    Device out = new Device();
    out.setName(in.getName());
    out.setAttributes(attributes);
    out.setCapacity(in.getCapacity());
    out.setConsumesCounters(in.getConsumesCounters());
    out.setTaints(taints);
    out.setAllowMultipleAllocations(in.getAllowMultipleAllocations());
    out.setBindsToNode(in.getBindsToNode());
    out.setBindingConditions(in.getBindingConditions());
    out.setBindingFailureConditions(in.getBindingFailureConditions());
    out.setNodeName(in.getNodeName());
    out.setNodeSelector(in.getNodeSelector());
    out.setAllNodes(in.getAllNodes());
    in.getAdditionalProperties().forEach(out::setAdditionalProperty);
    return out;
  }

  /** Greedy packing in order: a slice closes when the next device would exceed its limit. */
  static List<List<Device>> chunkDevices(List<Device> devices) {
    List<List<Device>> chunks = new ArrayList<>();
    List<Device> current = new ArrayList<>();
    boolean advanced = false;
    for (Device d : devices) {
      boolean deviceAdvanced = isAdvanced(d);
      boolean wouldBeAdvanced = advanced || deviceAdvanced;
      int limit =
          wouldBeAdvanced
              ? Limits.RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES
              : Limits.RESOURCE_SLICE_MAX_DEVICES;
      if (current.size() + 1 > limit) {
        chunks.add(current);
        current = new ArrayList<>();
        wouldBeAdvanced = deviceAdvanced;
      }
      current.add(d);
      advanced = wouldBeAdvanced;
    }
    if (!current.isEmpty()) {
      chunks.add(current);
    }
    return chunks;
  }

  static boolean isAdvanced(Device d) {
    return (d.getTaints() != null && !d.getTaints().isEmpty())
        || (d.getConsumesCounters() != null && !d.getConsumesCounters().isEmpty());
  }

  private static List<List<CounterSet>> chunkCounters(List<CounterSet> counters) {
    List<CounterSet> sorted =
        counters.stream().sorted(Comparator.comparing(CounterSet::getName)).toList();
    List<List<CounterSet>> chunks = new ArrayList<>();
    int max = Limits.RESOURCE_SLICE_MAX_COUNTER_SETS;
    for (int i = 0; i < sorted.size(); i += max) {
      chunks.add(sorted.subList(i, Math.min(sorted.size(), i + max)));
    }
    return chunks;
  }

  private static NodeSelector selector(Map<String, String> labels) {
    var requirements =
        new TreeMap<>(labels)
            .entrySet().stream()
                .map(
                    e ->
                        new NodeSelectorRequirementBuilder()
                            .withKey(e.getKey())
                            .withOperator("In")
                            .withValues(e.getValue())
                            .build())
                .toList();
    // Upstream allows exactly one term in a slice's node selector: the equalities are ANDed.
    return new NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .withMatchExpressions(requirements)
        .endNodeSelectorTerm()
        .build();
  }

  private static OwnerReference owner(NodeInfo node) {
    return new OwnerReferenceBuilder()
        .withApiVersion("v1")
        .withKind("Node")
        .withName(node.name())
        .withUid(node.uid())
        .withController(true)
        .build();
  }

  /**
   * The attribute name for a node label key: the prefix stays the domain, the name part becomes a C
   * identifier of at most 32 characters (label names allow '-' and '.', attributes do not).
   */
  public static String attributeName(String labelKey) {
    int slash = labelKey.indexOf('/');
    String domain = slash < 0 ? "" : labelKey.substring(0, slash);
    String id = labelKey.substring(slash + 1).replaceAll("[^A-Za-z0-9_]", "_");
    if (id.isEmpty() || Character.isDigit(id.charAt(0))) {
      id = "_" + id;
    }
    if (id.length() > Limits.DEVICE_MAX_ID_LENGTH) {
      id = id.substring(0, Limits.DEVICE_MAX_ID_LENGTH);
    }
    return domain.isEmpty() ? id : domain + "/" + id;
  }

  /** Turns free text into a valid label value: runs of other characters become '_', max 63. */
  public static String labelValue(String text) {
    String v = text.replaceAll("[^A-Za-z0-9_.-]+", "_");
    v = v.replaceAll("^[^A-Za-z0-9]+", "");
    if (v.length() > Limits.LABEL_VALUE_MAX_LENGTH) {
      v = v.substring(0, Limits.LABEL_VALUE_MAX_LENGTH);
    }
    return v.replaceAll("[^A-Za-z0-9]+$", "");
  }
}
