package io.kdra.devicedriver.status;

import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.DraPlugin;
import io.kdra.devicedriver.plugin.PrepareResult;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * A {@link DraPlugin} that reports what another one prepared in the claims' {@code status.devices}:
 * after each claim prepared, its devices' entries; after each claim unprepared, their removal. The
 * report is information for users and tools, not part of the preparation: a write that fails (API
 * server away, RBAC) is logged and the kubelet still gets the devices, and a later prepare or
 * unprepare of the claim writes it again.
 */
public final class DeviceStatusPlugin implements DraPlugin {
  private static final Logger LOG = Logger.getLogger(DeviceStatusPlugin.class);

  private final DraPlugin plugin;
  private final DeviceStatusReporter reporter;

  public DeviceStatusPlugin(DraPlugin plugin, DeviceStatusReporter reporter) {
    this.plugin = plugin;
    this.reporter = reporter;
  }

  @Override
  public Map<String, PrepareResult> prepareResourceClaims(List<ClaimRef> claims) {
    Map<String, PrepareResult> results = plugin.prepareResourceClaims(claims);
    for (ClaimRef c : claims) {
      PrepareResult r = results.get(c.uid());
      if (r != null && !r.failed()) {
        report(c, "prepared", () -> reporter.prepared(c, r.devices()));
      }
    }
    return results;
  }

  @Override
  public Map<String, String> unprepareResourceClaims(List<ClaimRef> claims) {
    Map<String, String> results = plugin.unprepareResourceClaims(claims);
    for (ClaimRef c : claims) {
      if ("".equals(results.get(c.uid()))) {
        report(c, "unprepared", () -> reporter.unprepared(c));
      }
    }
    return results;
  }

  @Override
  public void handleError(String message, Throwable cause) {
    plugin.handleError(message, cause);
  }

  private interface Write {
    void run() throws DeviceStatusReporter.StatusWriteException;
  }

  private static void report(ClaimRef claim, String what, Write write) {
    try {
      write.run();
    } catch (DeviceStatusReporter.StatusWriteException | RuntimeException e) {
      LOG.warnf("claim %s is %s, but its status.devices could not be written: %s", claim, what, e);
    }
  }
}
