package io.kdra.devicedriver.plugin;

import java.util.List;
import java.util.Map;

/**
 * What a driver implements so that {@link KubeletPluginServer} can serve the kubelet. The server
 * owns sockets, registration, protocol versions and (optionally) call serialisation; the plugin
 * owns what prepare and unprepare mean.
 *
 * <p>Contract, which follows upstream's {@code kubeletplugin.DRAPlugin}:
 *
 * <ul>
 *   <li>Both methods return exactly one entry per distinct claim UID of the input. A missing entry
 *       makes the kubelet retry; a failure is an entry with an error, never an exception: a
 *       top-level error would make the kubelet drop the results of every other claim too.
 *   <li>Prepare is idempotent: the kubelet repeats calls (retries, restarts), and each repeat for
 *       the same UID must return the same devices and CDI ids without duplicating any file.
 *   <li>Unprepare may run in another process than the prepare it reverses (after a driver restart
 *       or a rolling update), so it must work from the UID alone and persisted state; unpreparing a
 *       claim that is not prepared succeeds.
 *   <li>Implementations are thread-safe: calls for different pods overlap.
 * </ul>
 */
public interface DraPlugin {

  /** Prepares the claims; the map is keyed by claim UID. */
  Map<String, PrepareResult> prepareResourceClaims(List<ClaimRef> claims);

  /** Unprepares the claims; keyed by claim UID, the value is an error message or empty. */
  Map<String, String> unprepareResourceClaims(List<ClaimRef> claims);

  /**
   * Reports a failure that no caller can see (a broken socket, a refused registration). The plugin
   * decides whether it is fatal; the server only logs and reports it here.
   */
  void handleError(String message, Throwable cause);
}
