package io.kdra.devicedriver.prepare;

import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Brings the node's prepared state (checkpoint, CDI specs, device setups) back together for {@link
 * DeviceDriver}: once at startup, after a previous process stopped anywhere, and whenever this
 * process takes the shared lock after the other driver process of a rolling update changed the
 * checkpoint. The caller holds the shared lock; failures are logged (the next prepare of that claim
 * retries).
 */
final class NodeStateRecovery {
  private static final Logger LOG = Logger.getLogger(NodeStateRecovery.class);

  private final PreparePlanner planner;
  private final Supplier<Inventory> inventory;
  private final CdiSpecStore cdi;
  private final CheckpointStore checkpoint;

  NodeStateRecovery(
      PreparePlanner planner,
      Supplier<Inventory> inventory,
      CdiSpecStore cdi,
      CheckpointStore checkpoint) {
    this.planner = planner;
    this.inventory = inventory;
    this.cdi = cdi;
    this.checkpoint = checkpoint;
  }

  /**
   * Runs when this process takes the shared lock: the other driver process may have prepared or
   * unprepared claims meanwhile.
   */
  void reloadCheckpoint() throws IOException {
    CheckpointStore.Reload found = checkpoint.reload();
    if (found == CheckpointStore.Reload.UNCHANGED) {
      return;
    }
    planner.setup().forgetRemembered();
    if (found == CheckpointStore.Reload.DAMAGED) {
      recoverFromSpecs(checkpoint.all());
    }
  }

  /**
   * Makes the CDI directory match the checkpoint: re-writes the spec of every checkpointed claim
   * whose file is missing or differs (tmpfs after a reboot, a write lost in a power cut) and
   * removes this driver's specs of claims the checkpoint does not hold (a crash between spec and
   * checkpoint write: the spec is written first, so an intact checkpoint without the claim proves
   * the spec stale).
   *
   * <p>A damaged checkpoint proves nothing: its claims' specs belong to running pods, whose
   * containers need them to restart. Their entries are rebuilt from the specs instead ({@link
   * CdiSpecRecovery}), so that their unprepare still releases the devices' setup; a spec that
   * cannot be read back is kept, and logged.
   */
  void matchSpecsToCheckpoint() {
    Map<String, PreparedClaim> all = checkpoint.all();
    for (PreparedClaim c : all.values()) {
      try {
        cdi.ensure(c);
      } catch (IOException e) {
        LOG.errorf("cannot restore CDI spec of %s: %s", c.claim(), e.getMessage());
      }
    }
    if (checkpoint.damaged()) {
      recoverFromSpecs(all);
    } else {
      removeSpecsNotIn(all);
    }
  }

  /** {@link DeviceSetup#restore} of every device the setup involves, logging failures. */
  void restoreSetups() {
    if (planner.setup() == DeviceSetup.NONE) {
      return;
    }
    Map<String, PreparedClaim> prepared = checkpoint.all();
    for (NodeDevice device : inventory.get().devices()) {
      if (!planner.setup().involves(device)) {
        continue;
      }
      List<PreparedClaim> users =
          prepared.values().stream().filter(c -> c.usesSetupOf(device.name())).toList();
      try {
        planner.setup().restore(device, users);
      } catch (PrepareException | RuntimeException e) {
        LOG.errorf("cannot restore the setup of device %s: %s", device.name(), e.getMessage());
      }
    }
  }

  /** Deletes this driver's specs of claims the (intact) checkpoint does not hold. */
  private void removeSpecsNotIn(Map<String, PreparedClaim> all) {
    try {
      for (String file : specsNotIn(all)) {
        cdi.delete(file);
        LOG.infof("removed CDI spec %s of a claim that is not prepared", file);
      }
    } catch (IOException e) {
      LOG.errorf("cannot clean the CDI directory %s: %s", cdi.dir(), e.getMessage());
    }
  }

  /** A damaged checkpoint: puts back the entries of specs it lacks ({@link #recover}). */
  private void recoverFromSpecs(Map<String, PreparedClaim> all) {
    try {
      specsNotIn(all).forEach(this::recover);
    } catch (IOException e) {
      LOG.errorf("cannot read the CDI directory %s: %s", cdi.dir(), e.getMessage());
    }
  }

  /** This driver's spec files of claims {@code all} does not hold. */
  private List<String> specsNotIn(Map<String, PreparedClaim> all) throws IOException {
    Set<String> known = new HashSet<>();
    all.values().forEach(c -> known.add(c.cdiSpecFile()));
    return cdi.list(planner.names().specFilePrefix()).stream()
        .filter(file -> !known.contains(file))
        .toList();
  }

  /** Puts the checkpoint entry rebuilt from a spec file back, or keeps the file and says why. */
  private void recover(String file) {
    try {
      PreparedClaim claim =
          CdiSpecRecovery.claim(planner.names(), planner.pool(), file, cdi.read(file));
      checkpoint.put(claim);
      LOG.warnf(
          "checkpoint was damaged: rebuilt claim %s (devices %s) from its CDI spec %s",
          claim.claim().uid(), claim.devices().stream().map(d -> d.deviceName()).toList(), file);
    } catch (IOException | IllegalArgumentException e) {
      LOG.errorf(
          "checkpoint was damaged and CDI spec %s cannot be read back (%s); keeping it: a claim"
              + " that is unprepared removes it",
          file, e.getMessage());
    }
  }
}
