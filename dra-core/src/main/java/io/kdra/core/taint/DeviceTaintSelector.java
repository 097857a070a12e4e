package io.kdra.core.taint;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * {@code DeviceTaintSelector} as served by 1.37: driver, pool and device name, each optional; the
 * empty selector matches every device. (Its {@code deviceClassName} and CEL {@code selectors} were
 * tombstoned in 1.35.)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public class DeviceTaintSelector {

  private String driver;
  private String pool;
  private String device;

  public DeviceTaintSelector() {}

  public DeviceTaintSelector(String driver, String pool, String device) {
    this.driver = driver;
    this.pool = pool;
    this.device = device;
  }

  public String getDriver() {
    return driver;
  }

  public void setDriver(String driver) {
    this.driver = driver;
  }

  public String getPool() {
    return pool;
  }

  public void setPool(String pool) {
    this.pool = pool;
  }

  public String getDevice() {
    return device;
  }

  public void setDevice(String device) {
    this.device = device;
  }
}
