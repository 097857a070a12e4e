package io.kdra.devicedriver.prepare;

import io.kdra.devicedriver.plugin.ClaimRef;
import io.kdra.devicedriver.plugin.PreparedDevice;
import java.util.List;

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
}
