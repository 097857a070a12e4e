package io.kdra.core.taint;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;

/** {@code DeviceTaintRuleSpec}: which devices ({@code deviceSelector}) get which {@code taint}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public class DeviceTaintRuleSpec {

  private DeviceTaintSelector deviceSelector;
  private DeviceTaint taint;

  public DeviceTaintRuleSpec() {}

  public DeviceTaintRuleSpec(DeviceTaintSelector deviceSelector, DeviceTaint taint) {
    this.deviceSelector = deviceSelector;
    this.taint = taint;
  }

  /** Null matches no device (upstream: "Without a selector, no devices are matched"). */
  public DeviceTaintSelector getDeviceSelector() {
    return deviceSelector;
  }

  public void setDeviceSelector(DeviceTaintSelector deviceSelector) {
    this.deviceSelector = deviceSelector;
  }

  public DeviceTaint getTaint() {
    return taint;
  }

  public void setTaint(DeviceTaint taint) {
    this.taint = taint;
  }
}
