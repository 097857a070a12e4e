package io.kdra.core.cel.k8slib;

/**
 * The names of the {@code device} variable and its fields, as DRA's CEL compiler declares them
 * ({@code k8s.io/dynamic-resource-allocation/cel/compile.go}): shared by the environment, the
 * device's CEL view and the size estimator, so none of them depends on another for a name.
 */
public final class DeviceFields {

  public static final String VARIABLE = "device";
  public static final String TYPE = "kubernetes.DRADevice";
  public static final String DRIVER = "driver";
  public static final String ATTRIBUTES = "attributes";
  public static final String CAPACITY = "capacity";
  public static final String ALLOW_MULTIPLE_ALLOCATIONS = "allowMultipleAllocations";

  private DeviceFields() {}
}
