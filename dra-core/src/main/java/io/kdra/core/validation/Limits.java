package io.kdra.core.validation;

/**
 * The size limits of {@code resource.k8s.io/v1} as of Kubernetes 1.36, one constant per upstream
 * constant (named in the comment; they live in {@code k8s.io/api/resource/v1/types.go} unless said
 * otherwise). Where 1.34 had a different value the comment says so.
 */
public final class Limits {

  private Limits() {}

  // --- names (k8s.io/apimachinery/pkg/util/validation and resource/v1/types.go) ---

  /** DNS1123LabelMaxLength (apimachinery). */
  public static final int DNS1123_LABEL_MAX_LENGTH = 63;

  /** DNS1123SubdomainMaxLength (apimachinery). */
  public static final int DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

  /** qualifiedNameMaxLength (apimachinery): the name part of a label key. */
  public static final int LABEL_NAME_MAX_LENGTH = 63;

  /** LabelValueMaxLength (apimachinery). */
  public static final int LABEL_VALUE_MAX_LENGTH = 63;

  /** DriverNameMaxLength. */
  public static final int DRIVER_NAME_MAX_LENGTH = 63;

  /** PoolNameMaxLength. */
  public static final int POOL_NAME_MAX_LENGTH = 253;

  /** DeviceMaxDomainLength: the domain of a qualified name. */
  public static final int DEVICE_MAX_DOMAIN_LENGTH = 63;

  /** DeviceMaxIDLength: the C identifier of a qualified name. */
  public static final int DEVICE_MAX_ID_LENGTH = 32;

  /** DeviceAttributeMaxValueLength: string and version attribute values. */
  public static final int DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64;

  // --- ResourceSlice ---

  /** ResourceSliceMaxDevices. */
  public static final int RESOURCE_SLICE_MAX_DEVICES = 128;

  /**
   * ResourceSliceMaxDevicesWithAdvancedFeatures (1.35+): when any device has taints or
   * consumesCounters (1.36+: or list-typed attributes).
   */
  public static final int RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES = 64;

  /** ResourceSliceMaxAttributesAndCapacitiesPerDevice: attributes plus capacities, combined. */
  public static final int RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32;

  /** ResourceSliceMaxAttributeValuesPerDevice (1.36+): list items counted one by one. */
  public static final int RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE = 48;

  /** DeviceTaintsMaxLength (1.35+; 4 in 1.34). */
  public static final int DEVICE_TAINTS_MAX_LENGTH = 16;

  /** ResourceSliceMaxCounterSets (1.35+). */
  public static final int RESOURCE_SLICE_MAX_COUNTER_SETS = 8;

  /** ResourceSliceMaxCountersPerCounterSet (1.35+). */
  public static final int RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET = 32;

  /** ResourceSliceMaxDeviceCounterConsumptionsPerDevice (1.35+): consumesCounters entries. */
  public static final int RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE = 2;

  /** ResourceSliceMaxCountersPerDeviceCounterConsumption (1.35+). */
  public static final int RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION = 32;

  /** BindingConditionsMaxSize. */
  public static final int BINDING_CONDITIONS_MAX_SIZE = 4;

  /** BindingFailureConditionsMaxSize. */
  public static final int BINDING_FAILURE_CONDITIONS_MAX_SIZE = 4;

  /** CapacityRequestPolicyDiscreteMaxOptions: requestPolicy.validValues. */
  public static final int CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS = 10;

  // --- ResourceClaim, ResourceClaimTemplate, DeviceClass ---

  /** DeviceRequestsMaxSize: requests per claim, and request references per constraint/config. */
  public static final int DEVICE_REQUESTS_MAX_SIZE = 32;

  /** DeviceConstraintsMaxSize. */
  public static final int DEVICE_CONSTRAINTS_MAX_SIZE = 32;

  /** DeviceConfigMaxSize: config entries per claim and per class. */
  public static final int DEVICE_CONFIG_MAX_SIZE = 32;

  /** DeviceSelectorsMaxSize: per request, subrequest or class. */
  public static final int DEVICE_SELECTORS_MAX_SIZE = 32;

  /** FirstAvailableDeviceRequestMaxSize. */
  public static final int FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8;

  /** DeviceTolerationsMaxLength. */
  public static final int DEVICE_TOLERATIONS_MAX_LENGTH = 16;

  /** CELSelectorExpressionMaxLength. */
  public static final int CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024;

  /** CELSelectorExpressionMaxCost: estimated at validation, enforced at runtime. */
  public static final long CEL_SELECTOR_EXPRESSION_MAX_COST = 1_000_000;

  /** OpaqueParametersMaxLength: raw JSON bytes of opaque config parameters. */
  public static final int OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024;

  // --- ResourceClaim status ---

  /** AllocationResultsMaxSize: allocated devices per claim. */
  public static final int ALLOCATION_RESULTS_MAX_SIZE = DEVICE_REQUESTS_MAX_SIZE;

  /** 2 * DeviceConfigMaxSize: allocation result config holds class and claim config. */
  public static final int ALLOCATION_CONFIG_MAX_SIZE = 2 * DEVICE_CONFIG_MAX_SIZE;

  /** ResourceClaimReservedForMaxSize. */
  public static final int RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256;

  /** AllocatedDeviceStatusMaxConditions. */
  public static final int ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS = 8;

  /** AllocatedDeviceStatusDataMaxLength. */
  public static final int ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024;

  /** NetworkDeviceDataMaxIPs. */
  public static final int NETWORK_DEVICE_DATA_MAX_IPS = 16;

  /** NetworkDeviceDataInterfaceNameMaxLength. */
  public static final int NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH = 256;

  /** NetworkDeviceDataHardwareAddressMaxLength. */
  public static final int NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH = 128;
}
