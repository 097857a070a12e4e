package io.kdra.it.controlplane;

import java.util.ServiceLoader;

/**
 * Ends what a killed run left outside the control plane (real nodes, their network) before a new
 * control plane starts: those point at the gone API server. Implementations live with what they
 * reap and are found by {@link ServiceLoader}, so the control plane does not depend on them.
 */
public interface LeftoverReaper {

  /** Ends this kind of leftover of killed runs; no-op when there is none. */
  void reapLeftovers();

  /** Runs every reaper on the class path. */
  static void reapAll() {
    ServiceLoader.load(LeftoverReaper.class).forEach(LeftoverReaper::reapLeftovers);
  }
}
