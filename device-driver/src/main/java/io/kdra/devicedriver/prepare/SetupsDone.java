package io.kdra.devicedriver.prepare;

import io.kdra.devicedriver.discovery.NodeDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The device setup of one prepare call, remembering every device it began to set up, so that a
 * prepare that fails part-way can undo what it did: a started MPS daemon or a created MIG instance
 * must not outlive a claim that was never prepared. It also tells the setup which other prepared
 * claims the node holds (a GPU-wide setting must agree with theirs). Each device it is about to
 * touch is first recorded in the {@link SetupJournal}, so that a process that dies before the
 * claim's checkpoint entry leaves a record its successor rolls back.
 */
final class SetupsDone implements DeviceSetup {

  private final DeviceSetup setup;
  private final Supplier<Collection<PreparedClaim>> prepared;
  private final SetupJournal journal;
  private final Map<String, NodeDevice> begun = new LinkedHashMap<>();

  /**
   * @param prepared the claims prepared on this node (the checkpoint), read under the driver's
   *     setup lock
   * @param journal where the intent to set a device up is recorded before the setup runs
   */
  SetupsDone(
      DeviceSetup setup, Supplier<Collection<PreparedClaim>> prepared, SetupJournal journal) {
    this.setup = setup;
    this.prepared = prepared;
    this.journal = journal;
  }

  @Override
  public DeviceEdits prepare(Allocated device) throws PrepareException {
    // remembered before the call: a setup that fails half-way is released too (release is
    // idempotent: it undoes only what exists)
    begun.putIfAbsent(device.device().name(), device.device());
    String name = device.device().name();
    if (setup.involves(device.device())) {
      try {
        journal.begin(device.claimUid(), name);
      } catch (IOException e) {
        throw new PrepareException(
            "device " + name, "not touched, as its setup intent could not be recorded: " + e);
      }
    }
    List<PreparedClaim> others =
        prepared.get().stream().filter(c -> !c.claim().uid().equals(device.claimUid())).toList();
    return setup.prepare(device.withOtherClaims(others));
  }

  @Override
  public void release(NodeDevice device, boolean lastUser) throws PrepareException {
    setup.release(device, lastUser);
  }

  /** The devices set up so far, in order, each once. */
  List<NodeDevice> begun() {
    return new ArrayList<>(begun.values());
  }
}
