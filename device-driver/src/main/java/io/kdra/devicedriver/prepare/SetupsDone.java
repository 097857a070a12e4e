package io.kdra.devicedriver.prepare;

import io.kdra.devicedriver.discovery.NodeDevice;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The device setup of one prepare call, remembering every device it began to set up, so that a
 * prepare that fails part-way can undo what it did: a started MPS daemon or a created MIG instance
 * must not outlive a claim that was never prepared.
 */
final class SetupsDone implements DeviceSetup {

  private final DeviceSetup setup;
  private final Map<String, NodeDevice> begun = new LinkedHashMap<>();

  SetupsDone(DeviceSetup setup) {
    this.setup = setup;
  }

  @Override
  public DeviceEdits prepare(Allocated device) throws PrepareException {
    // remembered before the call: a setup that fails half-way is released too (release is
    // idempotent: it undoes only what exists)
    begun.putIfAbsent(device.device().name(), device.device());
    return setup.prepare(device);
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
