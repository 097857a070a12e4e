package io.kdra.devicedriver.prepare;

/**
 * CDI naming for one driver: kind {@code k8s.<driver>/claim}, one transient spec file per claim
 * named {@code k8s.<driver>-claim_<claimUID>.json} (the CDI convention {@code
 * <vendor>-<class>_<transientID>}), and device names {@code <claimUID>-<device>}, unique per claim
 * because container runtimes cache specs by device name.
 */
public record CdiNames(String driver) {

  /**
   * The CDI vendor: a DNS subdomain; the {@code k8s.} prefix marks specs written for Kubernetes.
   */
  public String vendor() {
    return "k8s." + driver;
  }

  /** The CDI class. */
  public String cdiClass() {
    return "claim";
  }

  /** {@code vendor/class}. */
  public String kind() {
    return vendor() + "/" + cdiClass();
  }

  /** The spec file of a claim; depends on the UID only, so an unprepare needs nothing else. */
  public String specFileName(String claimUid) {
    return (vendor() + "-" + cdiClass() + "_" + claimUid).replace('/', '_') + ".json";
  }

  /** The prefix every spec file of this driver starts with. */
  public String specFilePrefix() {
    return (vendor() + "-" + cdiClass() + "_").replace('/', '_');
  }

  /** The CDI device name of a device in a claim. */
  public String deviceName(String claimUid, String device) {
    return claimUid + "-" + device;
  }

  /**
   * The CDI device that mounts a request's device-metadata file: {@code
   * <claimUID>_metadata_<request>}, as upstream names it; the underscore, which no device name (a
   * DNS label) has, keeps it apart from the devices.
   */
  public String metadataDeviceName(String claimUid, String request) {
    return claimUid + "_metadata_" + request;
  }

  /** The fully qualified CDI device id the kubelet hands to the runtime. */
  public String deviceId(String claimUid, String device) {
    return kind() + "=" + deviceName(claimUid, device);
  }
}
