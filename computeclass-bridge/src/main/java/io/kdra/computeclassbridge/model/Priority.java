package io.kdra.computeclassbridge.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Objects;

/**
 * One entry of {@code spec.priorities}. The bridge maps {@code gpu} and {@code tpu}; it reads
 * {@code machineFamily}, {@code machineType} and {@code nodepools} only to describe a priority it
 * skips. Node-level fields ({@code spot}, {@code location}, {@code reservations}, ...) have no DRA
 * equivalent and pass through untouched.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class Priority extends Unknown {

  private Gpu gpu;
  private Tpu tpu;
  private String machineFamily;
  private String machineType;
  private List<String> nodepools;

  public Priority() {}

  /** A GPU priority, for tests and examples. */
  public static Priority gpu(String type, int count) {
    Priority p = new Priority();
    p.setGpu(new Gpu(type, count));
    return p;
  }

  /** A TPU priority, for tests and examples. */
  public static Priority tpu(String type, int count, String topology) {
    Priority p = new Priority();
    p.setTpu(new Tpu(type, count, topology));
    return p;
  }

  /** A priority without an accelerator, for tests and examples. */
  public static Priority machineFamily(String family) {
    Priority p = new Priority();
    p.setMachineFamily(family);
    return p;
  }

  public Gpu getGpu() {
    return gpu;
  }

  public void setGpu(Gpu gpu) {
    this.gpu = gpu;
  }

  public Tpu getTpu() {
    return tpu;
  }

  public void setTpu(Tpu tpu) {
    this.tpu = tpu;
  }

  public String getMachineFamily() {
    return machineFamily;
  }

  public void setMachineFamily(String machineFamily) {
    this.machineFamily = machineFamily;
  }

  public String getMachineType() {
    return machineType;
  }

  public void setMachineType(String machineType) {
    this.machineType = machineType;
  }

  public List<String> getNodepools() {
    return nodepools;
  }

  public void setNodepools(List<String> nodepools) {
    this.nodepools = nodepools;
  }

  @Override
  public boolean equals(Object o) {
    if (!super.equals(o)) {
      return false;
    }
    Priority p = (Priority) o;
    return Objects.equals(gpu, p.gpu)
        && Objects.equals(tpu, p.tpu)
        && Objects.equals(machineFamily, p.machineFamily)
        && Objects.equals(machineType, p.machineType)
        && Objects.equals(nodepools, p.nodepools);
  }

  @Override
  public int hashCode() {
    return Objects.hash(super.hashCode(), gpu, tpu, machineFamily, machineType, nodepools);
  }
}
