package io.kdra.devicedriver.prepare;

import io.kdra.devicedriver.discovery.Inventory;
import io.kdra.devicedriver.discovery.NodeDevice;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.function.BiPredicate;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Settles the setup intents a previous process left in the {@link SetupJournal}: a claim that
 * reached the checkpoint keeps its setup (the intent is dropped); one that did not has its devices
 * released, as an undone prepare would, so that a MIG instance or MPS daemon created for a claim
 * the kubelet may never unprepare does not leak. An intent whose device is not in the inventory
 * (yet), or whose release fails, is kept for the next pass.
 */
final class SetupIntents {
  private static final Logger LOG = Logger.getLogger(SetupIntents.class);

  /** Holds off every other operation on a claim while its intent is settled. */
  @FunctionalInterface
  interface ClaimGuard {
    Held hold(String uid);
  }

  /** A held guard; closing it lets the claim's operations go on. */
  interface Held extends AutoCloseable {
    @Override
    void close();
  }

  private final SetupJournal journal;
  private final CheckpointStore checkpoint;
  private final Supplier<Inventory> inventory;
  private final DeviceSetup setup;
  private final BiPredicate<String, String> lastUser;

  /**
   * @param lastUser whether no prepared claim but the first argument's uses the named device
   */
  SetupIntents(
      SetupJournal journal,
      CheckpointStore checkpoint,
      Supplier<Inventory> inventory,
      DeviceSetup setup,
      BiPredicate<String, String> lastUser) {
    this.journal = journal;
    this.checkpoint = checkpoint;
    this.inventory = inventory;
    this.setup = setup;
    this.lastUser = lastUser;
  }

  /**
   * Settles every pending intent, each while {@code guard} holds its claim.
   *
   * @return how many intents remain unsettled, -1 if the journal cannot be read
   */
  int settle(ClaimGuard guard) {
    List<SetupJournal.Intent> pending;
    try {
      pending = journal.pending();
    } catch (IOException e) {
      LOG.errorf("cannot read the setup intents in %s: %s", journal.dir(), e.getMessage());
      return -1;
    }
    int left = 0;
    for (SetupJournal.Intent intent : pending) {
      try (Held held = guard.hold(intent.uid())) {
        if (!settle(intent)) {
          left++;
        }
      }
    }
    return left;
  }

  private boolean settle(SetupJournal.Intent intent) {
    boolean done = true;
    if (checkpoint.get(intent.uid()).isPresent()) {
      LOG.infof("claim %s is prepared: its device setup %s stays", intent.uid(), intent.devices());
    } else {
      Inventory now = inventory.get();
      for (String name : intent.devices()) {
        Optional<NodeDevice> device = now.device(name);
        if (device.isEmpty()) {
          LOG.warnf(
              "claim %s began setting up device %s and never reached the checkpoint; the device is"
                  + " not in the inventory (yet): releasing it later",
              intent.uid(), name);
          done = false;
          continue;
        }
        try {
          setup.release(device.get(), lastUser.test(intent.uid(), name));
          LOG.warnf(
              "claim %s began setting up device %s and never reached the checkpoint (the driver"
                  + " stopped in between): released it",
              intent.uid(), name);
        } catch (PrepareException | RuntimeException e) {
          LOG.errorf(
              "claim %s: releasing the unfinished setup of device %s failed, retrying later: %s",
              intent.uid(), name, e.getMessage());
          done = false;
        }
      }
    }
    return done && forget(intent.uid());
  }

  /** Drops a claim's intents; false (logged) if the file stays, to be settled again later. */
  boolean forget(String uid) {
    try {
      journal.clear(uid);
      return true;
    } catch (IOException e) {
      LOG.warnf("cannot remove the setup intent of claim %s: %s", uid, e.getMessage());
      return false;
    }
  }
}
