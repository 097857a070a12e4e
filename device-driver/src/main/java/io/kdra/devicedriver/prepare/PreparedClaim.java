package io.kdra.devicedriver.prepare;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kdra.core.config.SharingConfig;
import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PreparedDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A planned (and, once in the checkpoint, applied) claim: everything needed to answer a repeated
 * prepare and to undo it, without the API server.
 *
 * @param claim the claim as the kubelet named it
 * @param devices what the kubelet gets back
 * @param cdiSpecFile file name (no directory) of the claim's CDI spec
 * @param cdiSpec the exact spec content, kept so that a spec lost with a tmpfs reboot can be
 *     written again from the checkpoint
 * @param traceParent the claim's W3C trace context, so the unprepare span joins the same trace even
 *     when the claim object is gone; empty if the claim had none
 */
public record PreparedClaim(
    ClaimRef claim,
    List<PreparedDevice> devices,
    String cdiSpecFile,
    String cdiSpec,
    String traceParent) {
  public PreparedClaim {
    devices = List.copyOf(devices);
    traceParent = traceParent == null ? "" : traceParent;
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Whether this entry was rebuilt from a CDI spec after the checkpoint was damaged ({@link
   * CdiSpecRecovery}): it knows the claim's UID and devices, enough to unprepare, but not its
   * namespace, name or request names, so a prepare plans the claim again. A prepared claim always
   * has a namespace, so an empty one marks a rebuilt entry without a new checkpoint field.
   */
  public boolean recovered() {
    return claim.namespace().isEmpty();
  }

  /** The variable beside {@code KDRA_DEVICE_<n>} that marks an adminAccess device. */
  static final String ADMIN_ACCESS_SUFFIX = "_ADMIN_ACCESS=";

  /**
   * The time-slice interval this claim's config asked for on a device, read back from its CDI spec
   * ({@code KDRA_DEVICE_<n>=<device>} beside {@code KDRA_DEVICE_<n>_TIMESLICE_INTERVAL}, which the
   * planner writes only for a {@code TimeSlicing} config): the spec is what the checkpoint keeps,
   * so this survives a driver restart without a new checkpoint field. Empty when the claim set no
   * interval there.
   */
  public Optional<SharingConfig.Interval> timeSliceInterval(String deviceName) {
    try {
      return deviceVariable(deviceName, "_TIMESLICE_INTERVAL=")
          .map(SharingConfig.Interval::valueOf);
    } catch (IllegalArgumentException unknown) {
      return Optional.empty();
    }
  }

  /**
   * Whether the claim got this device with adminAccess ({@code KDRA_DEVICE_<n>_ADMIN_ACCESS=true}
   * in its spec, as {@link #timeSliceInterval} reads the interval): nothing was set up for it.
   */
  public boolean adminAccess(String deviceName) {
    return deviceVariable(deviceName, ADMIN_ACCESS_SUFFIX).filter("true"::equals).isPresent();
  }

  /**
   * Whether the claim holds this device as a user of its setup (an MPS daemon, a MIG instance): it
   * has the device, and not with adminAccess. Decides who is a device's last user.
   */
  public boolean usesSetupOf(String deviceName) {
    return devices.stream().anyMatch(d -> d.deviceName().equals(deviceName))
        && !adminAccess(deviceName);
  }

  /** The value of {@code KDRA_DEVICE_<n><suffix>} for the {@code n} naming this device. */
  private Optional<String> deviceVariable(String deviceName, String suffix) {
    JsonNode spec;
    try {
      spec = JSON.readTree(cdiSpec);
    } catch (JsonProcessingException e) {
      return Optional.empty();
    }
    for (JsonNode device : spec.path("devices")) {
      List<String> env = new ArrayList<>();
      device.path("containerEdits").path("env").forEach(e -> env.add(e.asText()));
      for (String e : env) {
        int eq = e.indexOf('=');
        if (eq > 0
            && e.substring(0, eq).matches("KDRA_DEVICE_[0-9]+")
            && e.substring(eq + 1).equals(deviceName)) {
          String variable = e.substring(0, eq) + suffix;
          for (String f : env) {
            if (f.startsWith(variable)) {
              return Optional.of(f.substring(variable.length()));
            }
          }
        }
      }
    }
    return Optional.empty();
  }
}
