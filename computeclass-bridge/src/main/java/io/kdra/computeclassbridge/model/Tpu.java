package io.kdra.computeclassbridge.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Objects;

/** {@code priorities[].tpu}: TPU type as GKE names it, chips per node and slice topology. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Tpu extends Unknown {

  private String type;
  private Integer count;
  private String topology;

  public Tpu() {}

  public Tpu(String type, Integer count, String topology) {
    this.type = type;
    this.count = count;
    this.topology = topology;
  }

  public String getType() {
    return type;
  }

  public void setType(String type) {
    this.type = type;
  }

  /** Chips per node; null when the admin left it out. */
  public Integer getCount() {
    return count;
  }

  public void setCount(Integer count) {
    this.count = count;
  }

  /** For example {@code 2x4}; null when not given. */
  public String getTopology() {
    return topology;
  }

  public void setTopology(String topology) {
    this.topology = topology;
  }

  @Override
  public boolean equals(Object o) {
    if (!super.equals(o)) {
      return false;
    }
    Tpu t = (Tpu) o;
    return Objects.equals(type, t.type)
        && Objects.equals(count, t.count)
        && Objects.equals(topology, t.topology);
  }

  @Override
  public int hashCode() {
    return Objects.hash(super.hashCode(), type, count, topology);
  }
}
