package io.kdra.computeclassbridge.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Objects;

/**
 * {@code priorities[].gpu}: an accelerator type as GKE names it (e.g. {@code nvidia-l4}) and the
 * number per node. {@code driverVersion} (GKE's driver install choice) is carried through unread.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Gpu extends Unknown {

  private String type;
  private Integer count;

  public Gpu() {}

  public Gpu(String type, Integer count) {
    this.type = type;
    this.count = count;
  }

  public String getType() {
    return type;
  }

  public void setType(String type) {
    this.type = type;
  }

  /** GPUs per node; null when the admin left it out. */
  public Integer getCount() {
    return count;
  }

  public void setCount(Integer count) {
    this.count = count;
  }

  @Override
  public boolean equals(Object o) {
    return super.equals(o)
        && Objects.equals(type, ((Gpu) o).type)
        && Objects.equals(count, ((Gpu) o).count);
  }

  @Override
  public int hashCode() {
    return Objects.hash(super.hashCode(), type, count);
  }
}
