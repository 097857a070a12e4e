package io.kdra.devicedriver.prepare;

import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.core.cel.golang.GoQuote;
import io.kdra.core.config.OpaqueConfigDecoder;
import io.kdra.core.config.OpaqueConfigException;
import io.kdra.core.config.SharingConfig;
import io.kdra.core.model.Quantity;
import io.kdra.core.model.TraceAnnotation;
import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PreparedDevice;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Plans the preparation of one claim: which of this node's devices it gets, with which sharing
 * settings, and the exact CDI spec. Deterministic (the kubelet retries, and a retry must produce
 * byte-identical files); it reads no files, clock or API. The one impure step, setting up shared
 * and partitioned hardware, is the injected {@link DeviceSetup}. Thread-safe.
 *
 * <p>Rules, in the order they are checked (each failure names the field):
 *
 * <ol>
 *   <li>{@code metadata.uid} equals the UID the kubelet sent (a claim deleted and re-created under
 *       the same name is a different claim);
 *   <li>{@code status.allocation} is set;
 *   <li>at least one {@code results[]} entry has {@code driver} = this driver; each such entry's
 *       {@code pool} is this node's pool and its {@code device} is a device of this node;
 *   <li>{@code config[]} entries for this driver decode (see {@link OpaqueConfigDecoder}); for each
 *       result the last matching entry wins, class configs before claim configs, as upstream orders
 *       them; an entry matches when its {@code requests} is empty or names the result's request or
 *       that request's parent ({@code gpu} matches {@code gpu/large});
 *   <li>the MPS settings of one claim agree (the CUDA MPS variables are per container);
 *   <li>results of one claim on the same shared device (one share per request) have the same
 *       config; the device is set up once, with the sum of their consumed capacity.
 * </ol>
 */
public final class PreparePlanner {
  /** The claim annotation carrying the W3C trace context of the claim's trace. */
  public static final String TRACE_ANNOTATION = TraceAnnotation.KEY;

  private final String driver;
  private final String pool;
  private final CdiNames names;
  private final DeviceSetup setup;
  private final Path metadataDir;

  /**
   * @param driver this driver's name
   * @param pool this node's pool name (the node name)
   */
  public PreparePlanner(String driver, String pool) {
    this(driver, pool, DeviceSetup.NONE);
  }

  /**
   * @param setup configures shared and partitioned devices (the one impure step; it must be
   *     idempotent, so a retried prepare still produces identical files)
   */
  public PreparePlanner(String driver, String pool, DeviceSetup setup) {
    this(driver, pool, setup, null);
  }

  private PreparePlanner(String driver, String pool, DeviceSetup setup, Path metadataDir) {
    this.driver = driver;
    this.pool = pool;
    this.names = new CdiNames(driver);
    this.setup = setup;
    this.metadataDir = metadataDir;
  }

  /**
   * This planner, also giving the containers each request's device-metadata file ({@link
   * DeviceMetadata}), kept under {@code pluginDataDir} (the driver's directory under the kubelet's
   * plugins directory, at the same path on the host as in the driver's container).
   */
  public PreparePlanner withDeviceMetadata(Path pluginDataDir) {
    return new PreparePlanner(driver, pool, setup, pluginDataDir.toAbsolutePath());
  }

  /** Where device-metadata files go; null when the containers get none. */
  Path metadataDir() {
    return metadataDir;
  }

  /** A plan with the device-metadata files its CDI spec mounts (none without metadata). */
  record Planned(PreparedClaim claim, List<DeviceMetadata.File> metadata) {}

  /** The device setup this planner applies. */
  public DeviceSetup setup() {
    return setup;
  }

  /** This driver's name. */
  public String driver() {
    return driver;
  }

  /** This node's pool name. */
  public String pool() {
    return pool;
  }

  /** The CDI naming this planner uses. */
  public CdiNames names() {
    return names;
  }

  /**
   * @param ref the claim as the kubelet named it
   * @param claim the claim as read from the API
   * @param inventory this node's current devices
   * @throws PrepareException naming the first field that makes the claim unpreparable here
   */
  public PreparedClaim plan(ClaimRef ref, ResourceClaim claim, Inventory inventory)
      throws PrepareException {
    return plan(ref, claim, inventory, setup);
  }

  /** As above, setting devices up through {@code setup} (this planner's, decorated). */
  PreparedClaim plan(ClaimRef ref, ResourceClaim claim, Inventory inventory, DeviceSetup setup)
      throws PrepareException {
    return planned(ref, claim, inventory, setup).claim();
  }

  /** As above, with the device-metadata files to write before the spec. */
  Planned planned(ClaimRef ref, ResourceClaim claim, Inventory inventory, DeviceSetup setup)
      throws PrepareException {
    String uid = claim.getMetadata() == null ? null : claim.getMetadata().getUid();
    if (!ref.uid().equals(uid)) {
      throw new PrepareException(
          "metadata.uid",
          "is "
              + quote(uid)
              + " but the kubelet asked for "
              + quote(ref.uid())
              + " (the claim was deleted and re-created?)");
    }
    AllocationResult allocation =
        claim.getStatus() == null ? null : claim.getStatus().getAllocation();
    if (allocation == null || allocation.getDevices() == null) {
      throw new PrepareException("status.allocation", "the claim is not allocated");
    }
    List<DeviceRequestAllocationResult> results =
        Objects.requireNonNullElse(allocation.getDevices().getResults(), List.of());
    List<ConfigEntry> configs = configs(allocation.getDevices().getConfig());

    // First every result of this driver, then the setup once per device: a shared device may be
    // allocated to one claim more than once (one share per request), and the claim then holds the
    // sum of those shares, with one sharing setting.
    List<Resolved> resolved = new ArrayList<>();
    Map<String, Resolved> firstOfDevice = new HashMap<>();
    Map<String, Map<String, Quantity>> consumedOfDevice = new HashMap<>();
    SharingConfig.Mps mps = null;
    for (int i = 0; i < results.size(); i++) {
      DeviceRequestAllocationResult r = results.get(i);
      if (!driver.equals(r.getDriver())) {
        continue;
      }
      String at = "status.allocation.devices.results[" + i + "]";
      if (!pool.equals(r.getPool())) {
        throw new PrepareException(
            at + ".pool", quote(r.getPool()) + " is not this node's pool " + quote(pool));
      }
      NodeDevice device =
          inventory
              .device(Objects.requireNonNullElse(r.getDevice(), ""))
              .orElseThrow(
                  () ->
                      new PrepareException(
                          at + ".device",
                          quote(r.getDevice()) + " is not a device of node " + quote(pool)));
      String request = Objects.requireNonNullElse(r.getRequest(), "");
      ConfigEntry config = effectiveConfig(configs, request);
      SharingConfig sharing = config == null ? SharingConfig.EXCLUSIVE : config.sharing();
      if (sharing instanceof SharingConfig.Mps m) {
        if (mps != null && !mps.equals(m)) {
          throw new PrepareException(
              config.path(), "MPS settings differ from another config of the same claim");
        }
        mps = m;
      }
      boolean admin = Boolean.TRUE.equals(r.getAdminAccess());
      Resolved here = new Resolved(at, request, device, sharing, config, admin);
      Resolved first = firstOfDevice.putIfAbsent(device.name(), here);
      if (first != null && !first.sharing().equals(sharing)) {
        throw new PrepareException(
            at + ".request",
            "request "
                + quote(request)
                + " shares device "
                + quote(device.name())
                + " with request "
                + quote(first.request())
                + " ("
                + first.at()
                + ") of the same claim, but their configs differ ("
                + describe(sharing)
                + " against "
                + describe(first.sharing())
                + "); the device has one setting per claim, so give both requests the same"
                + " config");
      }
      Map<String, Quantity> sum =
          consumedOfDevice.computeIfAbsent(device.name(), k -> new TreeMap<>());
      consumed(r).forEach((k, q) -> sum.merge(k, q, Quantity::add));
      resolved.add(here);
    }

    CdiSpecBuilder spec = new CdiSpecBuilder(names);
    List<PreparedDevice> devices = new ArrayList<>();
    Set<String> inSpec = new HashSet<>();
    Map<String, String> setupEnv = new HashMap<>();
    Map<String, String> setupMounts = new HashMap<>();
    for (Resolved r : resolved) {
      NodeDevice device = r.device();
      SharingConfig sharing = r.sharing();
      String at = r.at();
      int n = devices.size();
      String cdiName = names.deviceName(uid, device.name());
      // the CDI device of a device the claim holds several shares of is written once
      if (inSpec.add(cdiName)) {
        // adminAccess may name a device another claim holds (admin results hold nothing): setting
        // it up, or releasing it later, would change what that claim is using
        DeviceSetup.DeviceEdits edits =
            r.adminAccess()
                ? DeviceSetup.DeviceEdits.NONE
                : setup.prepare(
                    new DeviceSetup.Allocated(
                        ref,
                        device,
                        sharing,
                        consumedOfDevice.get(device.name()),
                        r.config() == null ? "" : r.config().path(),
                        List.of()));
        for (String e : edits.env()) {
          String name = e.substring(0, Math.max(0, e.indexOf('=')));
          String before = setupEnv.putIfAbsent(name, e);
          if (before != null && !before.equals(e)) {
            throw new PrepareException(
                at + ".device",
                "device "
                    + quote(device.name())
                    + " needs "
                    + e
                    + " but another device of the claim needs "
                    + before
                    + "; a container has one value (use one shared GPU per claim with MPS)");
          }
        }
        for (DeviceSetup.Mount m : edits.mounts()) {
          String before = setupMounts.putIfAbsent(m.containerPath(), m.hostPath());
          if (before != null && !before.equals(m.hostPath())) {
            throw new PrepareException(
                at + ".device",
                "device "
                    + quote(device.name())
                    + " needs "
                    + m.hostPath()
                    + " at "
                    + m.containerPath()
                    + " but another device of the claim needs "
                    + before
                    + " there (use one shared GPU per claim with MPS)");
          }
        }
        List<String> env = new ArrayList<>(env(n, device, sharing, r.adminAccess()));
        env.addAll(edits.env());
        List<String> nodes = new ArrayList<>(device.deviceNodes());
        edits.deviceNodes().stream().filter(d -> !nodes.contains(d)).forEach(nodes::add);
        spec.device(cdiName, env, nodes, edits.mounts());
      }
      devices.add(
          new PreparedDevice(
              List.of(baseRequest(r.request())),
              pool,
              device.name(),
              List.of(names.deviceId(uid, device.name()))));
    }
    if (devices.isEmpty()) {
      throw new PrepareException(
          "status.allocation.devices.results",
          "no device is allocated from driver " + quote(driver));
    }
    spec.common(mpsEnv(mps, devices.size()), inventory.commonDeviceNodes());
    Map<String, String> annotations =
        Objects.requireNonNullElse(claim.getMetadata().getAnnotations(), Map.of());
    List<DeviceMetadata.File> metadata = List.of();
    if (metadataDir != null) {
      metadata = metadata(claim, annotations, resolved);
      devices = withMetadataDevices(uid, devices, metadata, spec);
    }
    String traceParent = annotations.getOrDefault(TRACE_ANNOTATION, "");
    return new Planned(
        new PreparedClaim(ref, devices, names.specFileName(uid), spec.build(), traceParent),
        metadata);
  }

  private List<DeviceMetadata.File> metadata(
      ResourceClaim claim, Map<String, String> annotations, List<Resolved> resolved) {
    List<DeviceMetadata.Allocated> allocated = new ArrayList<>();
    Set<String> listed = new HashSet<>();
    for (Resolved r : resolved) {
      // several shares of one device in one request: listed once
      if (listed.add(r.request() + "\n" + r.device().name())) {
        allocated.add(new DeviceMetadata.Allocated(r.request(), pool, r.device()));
      }
    }
    return DeviceMetadata.files(
        driver,
        new DeviceMetadata.Claim(
            claim.getMetadata().getNamespace(),
            claim.getMetadata().getName(),
            claim.getMetadata().getUid(),
            annotations.get(DeviceMetadata.POD_CLAIM_NAME)),
        allocated);
  }

  /**
   * Adds a CDI device per metadata file that binds it read-only into the container, and its id to
   * the first device of its request, as upstream's helper injects it: a container that uses the
   * request gets the file.
   */
  private List<PreparedDevice> withMetadataDevices(
      String uid,
      List<PreparedDevice> devices,
      List<DeviceMetadata.File> files,
      CdiSpecBuilder spec) {
    List<PreparedDevice> out = new ArrayList<>(devices);
    for (DeviceMetadata.File f : files) {
      String cdiName = names.metadataDeviceName(uid, f.request());
      spec.readOnlyFile(cdiName, metadataDir.resolve(f.hostPath()).toString(), f.containerPath());
      for (int i = 0; i < out.size(); i++) {
        PreparedDevice d = out.get(i);
        if (d.requestNames().contains(f.request())) {
          List<String> ids = new ArrayList<>(d.cdiDeviceIds());
          ids.add(names.kind() + "=" + cdiName);
          out.set(i, new PreparedDevice(d.requestNames(), d.poolName(), d.deviceName(), ids));
          break;
        }
      }
    }
    return out;
  }

  /** The allocator's accounting of a share, in our quantity type. */
  private static Map<String, Quantity> consumed(DeviceRequestAllocationResult r) {
    Map<String, Quantity> out = new TreeMap<>();
    if (r.getConsumedCapacity() != null) {
      r.getConsumedCapacity()
          .forEach(
              (k, v) -> {
                Quantity q = Quantity.fromApi(v);
                if (q != null) {
                  out.put(k, q);
                }
              });
    }
    return out;
  }

  private record ConfigEntry(String path, List<String> requests, SharingConfig sharing) {}

  /** One result of this driver: where it is, its device, and the config that applies to it. */
  private record Resolved(
      String at,
      String request,
      NodeDevice device,
      SharingConfig sharing,
      ConfigEntry config,
      boolean adminAccess) {}

  private static String describe(SharingConfig sharing) {
    if (sharing instanceof SharingConfig.TimeSlicing t) {
      return "TimeSlicing, interval " + t.interval();
    }
    if (sharing instanceof SharingConfig.Mps m) {
      return "MPS, activeThreadPercentage "
          + m.activeThreadPercentage()
          + m.pinnedMemoryLimit().map(q -> ", pinnedMemoryLimit " + q).orElse("");
    }
    return "no sharing config";
  }

  private List<ConfigEntry> configs(List<DeviceAllocationConfiguration> raw)
      throws PrepareException {
    List<ConfigEntry> fromClass = new ArrayList<>();
    List<ConfigEntry> fromClaim = new ArrayList<>();
    List<DeviceAllocationConfiguration> all = Objects.requireNonNullElse(raw, List.of());
    for (int j = 0; j < all.size(); j++) {
      DeviceAllocationConfiguration c = all.get(j);
      String at = "status.allocation.devices.config[" + j + "]";
      if (c.getOpaque() == null || !driver.equals(c.getOpaque().getDriver())) {
        continue; // another driver's config, or a kind of config we do not take
      }
      SharingConfig sharing;
      try {
        sharing =
            OpaqueConfigDecoder.decode(c.getOpaque().getParameters(), at + ".opaque.parameters");
      } catch (OpaqueConfigException e) {
        throw new PrepareException(e.field(), e.problem());
      }
      ConfigEntry entry =
          new ConfigEntry(at, Objects.requireNonNullElse(c.getRequests(), List.of()), sharing);
      String source = Objects.requireNonNullElse(c.getSource(), "");
      switch (source) {
        case "FromClass" -> fromClass.add(entry);
        case "FromClaim" -> fromClaim.add(entry);
        default ->
            throw new PrepareException(
                at + ".source", quote(source) + " is not one of FromClass, FromClaim");
      }
    }
    fromClass.addAll(fromClaim);
    return fromClass;
  }

  private static ConfigEntry effectiveConfig(List<ConfigEntry> configs, String request) {
    ConfigEntry winner = null;
    for (ConfigEntry c : configs) {
      if (c.requests().isEmpty()
          || c.requests().contains(request)
          || c.requests().contains(baseRequest(request))) {
        winner = c;
      }
    }
    return winner;
  }

  /** {@code gpu/large} to {@code gpu}: containers reference top-level request names only. */
  static String baseRequest(String request) {
    int slash = request.indexOf('/');
    return slash < 0 ? request : request.substring(0, slash);
  }

  // Variable names carry the device's position in the claim, so several devices of one claim in
  // one container never clash.
  private static List<String> env(
      int n, NodeDevice device, SharingConfig sharing, boolean adminAccess) {
    String p = "KDRA_DEVICE_" + n;
    List<String> env = new ArrayList<>();
    env.add(p + "=" + device.name());
    env.add(p + "_SHARING_STRATEGY=" + sharing.strategy());
    if (sharing instanceof SharingConfig.TimeSlicing t) {
      env.add(p + "_TIMESLICE_INTERVAL=" + t.interval());
    }
    if (adminAccess) {
      env.add(p + PreparedClaim.ADMIN_ACCESS_SUFFIX + "true");
    }
    for (Map.Entry<String, String> e : device.env().entrySet()) {
      env.add(e.getKey() + "=" + e.getValue());
    }
    return env;
  }

  private static List<String> mpsEnv(SharingConfig.Mps mps, int deviceCount) {
    if (mps == null) {
      return List.of();
    }
    List<String> env = new ArrayList<>();
    env.add("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + mps.activeThreadPercentage());
    mps.pinnedMemoryLimit()
        .ifPresent(
            q -> {
              // CUDA wants "<ordinal>=<size>M,..."; ordinals are the container's device order.
              long mib =
                  q.value()
                      .divide(BigDecimal.valueOf(1024L * 1024L), RoundingMode.CEILING)
                      .longValueExact();
              List<String> limits = new ArrayList<>();
              for (int i = 0; i < deviceCount; i++) {
                limits.add(i + "=" + mib + "M");
              }
              env.add("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + String.join(",", limits));
            });
    return env;
  }

  private static String quote(String s) {
    return s == null ? "null" : GoQuote.string(s);
  }
}
