package io.kdra.devicedriver.prepare;

import io.kdra.core.config.SharingConfig;
import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.plugin.ClaimRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the hardware needs beyond a CDI spec when a claim gets a device: time-slice intervals, an
 * MPS control daemon, MIG instances. The only impure step of planning a claim; it must be
 * idempotent (the kubelet retries a failed prepare, and a crash may repeat one).
 */
public interface DeviceSetup {

  /** Nothing to set up: exclusive whole devices. */
  DeviceSetup NONE =
      new DeviceSetup() {
        @Override
        public DeviceEdits prepare(Allocated device) {
          return DeviceEdits.NONE;
        }

        @Override
        public void release(NodeDevice device, boolean lastUser) {}

        @Override
        public boolean involves(NodeDevice device) {
          return false;
        }
      };

  /**
   * Each setup in turn; a device's edits are the concatenation (each setup leaves devices that are
   * not its kind alone).
   */
  static DeviceSetup all(List<DeviceSetup> setups) {
    List<DeviceSetup> active = setups.stream().filter(s -> s != NONE).toList();
    if (active.isEmpty()) {
      return NONE;
    }
    if (active.size() == 1) {
      return active.get(0);
    }
    return new DeviceSetup() {
      @Override
      public DeviceEdits prepare(Allocated device) throws PrepareException {
        List<String> env = new ArrayList<>();
        List<String> nodes = new ArrayList<>();
        List<Mount> mounts = new ArrayList<>();
        for (DeviceSetup s : active) {
          DeviceEdits e = s.prepare(device);
          env.addAll(e.env());
          nodes.addAll(e.deviceNodes());
          mounts.addAll(e.mounts());
        }
        return new DeviceEdits(env, nodes, mounts);
      }

      @Override
      public void release(NodeDevice device, boolean lastUser) throws PrepareException {
        for (DeviceSetup s : active) {
          s.release(device, lastUser);
        }
      }

      @Override
      public boolean involves(NodeDevice device) {
        return active.stream().anyMatch(s -> s.involves(device));
      }

      @Override
      public void forgetRemembered() {
        active.forEach(DeviceSetup::forgetRemembered);
      }

      @Override
      public void restore(NodeDevice device, List<PreparedClaim> users) throws PrepareException {
        for (DeviceSetup s : active) {
          s.restore(device, users);
        }
      }
    };
  }

  /**
   * One allocated device of a claim.
   *
   * @param claim the claim
   * @param device the device as the node has it
   * @param sharing the claim's sharing config for it
   * @param consumedCapacity what the allocator accounted to the claim on this device (shared
   *     devices; the sum when the claim holds several shares of it)
   * @param configPath the config entry {@code sharing} came from ({@code
   *     status.allocation.devices.config[<j>]}), empty without one
   * @param otherClaims the node's other prepared claims (from the checkpoint): what a shared GPU,
   *     or the node's MPS, already serves
   */
  record Allocated(
      ClaimRef claim,
      NodeDevice device,
      SharingConfig sharing,
      Map<String, Quantity> consumedCapacity,
      String configPath,
      List<PreparedClaim> otherClaims) {
    public Allocated {
      consumedCapacity = Map.copyOf(consumedCapacity);
      otherClaims = List.copyOf(otherClaims);
    }

    public Allocated(
        String claimUid,
        NodeDevice device,
        SharingConfig sharing,
        Map<String, Quantity> consumedCapacity) {
      this(new ClaimRef("", claimUid, ""), device, sharing, consumedCapacity, "", List.of());
    }

    public String claimUid() {
      return claim.uid();
    }

    /** The other prepared claims that hold this device: the setting it already has for them. */
    public List<PreparedClaim> otherUsers() {
      return otherClaims.stream().filter(c -> c.usesSetupOf(device.name())).toList();
    }

    /** The same allocation, with the node's other prepared claims. */
    Allocated withOtherClaims(List<PreparedClaim> others) {
      return new Allocated(claim, device, sharing, consumedCapacity, configPath, others);
    }
  }

  /**
   * Extra container edits for one device.
   *
   * @param env {@code NAME=value}
   * @param deviceNodes host device paths
   * @param mounts host directories bound into the container
   */
  record DeviceEdits(List<String> env, List<String> deviceNodes, List<Mount> mounts) {
    public static final DeviceEdits NONE = new DeviceEdits(List.of(), List.of(), List.of());

    public DeviceEdits {
      env = List.copyOf(env);
      deviceNodes = List.copyOf(deviceNodes);
      mounts = List.copyOf(mounts);
    }
  }

  /** A bind mount of a host directory. */
  record Mount(String hostPath, String containerPath) {}

  /**
   * Sets the device up for the claim.
   *
   * @throws PrepareException naming the device and what failed
   */
  DeviceEdits prepare(Allocated device) throws PrepareException;

  /**
   * Undoes {@link #prepare} after a claim using the device was unprepared.
   *
   * @param lastUser whether no other prepared claim still uses the device
   * @throws PrepareException naming the device and what failed
   */
  void release(NodeDevice device, boolean lastUser) throws PrepareException;

  /**
   * Whether {@link #prepare} or {@link #release} may do anything for this device; when false both
   * leave it alone, and the driver need not serialise its claims with other setups (a setup command
   * that hangs until its timeout then holds up only the claims it concerns). Defaults to true.
   */
  default boolean involves(NodeDevice device) {
    return true;
  }

  /**
   * At driver start, before the kubelet can call: makes what a previous process left on the device
   * match the checkpoint (adopt what its prepared claims use, stop what none does). Nothing by
   * default.
   *
   * @param users the prepared claims that use the device's setup (none: it is not in use)
   * @throws PrepareException naming the device and what failed
   */
  default void restore(NodeDevice device, List<PreparedClaim> users) throws PrepareException {}

  /**
   * Another driver process (the other pod of a rolling update) changed the prepared claims: forget
   * what this process remembers of the devices' state (a daemon it started may have been stopped
   * there), and find it out again when next needed. Nothing by default.
   */
  default void forgetRemembered() {}
}
