package io.kdra.core.validation;

import static io.kdra.core.validation.Checks.isEmpty;
import static io.kdra.core.validation.Checks.list;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationConfiguration;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.kdra.core.validation.ValidationError.ObjectRef;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Validates {@code ResourceClaim}s (spec and status) and {@code ResourceClaimTemplate}s (their
 * {@code spec.spec}, with the same rules), as the API server does for new objects under Kubernetes
 * 1.36.
 *
 * <p>Fields the API server defaults are accepted unset: {@code allocationMode} (ExactCount), {@code
 * count} (1) and toleration {@code operator} (Equal). Not checked: CEL compilation and cost,
 * immutability and other update-only rules, template metadata, device status entries.
 */
public final class ResourceClaimValidator {

  static final List<String> CONFIG_SOURCES = List.of("FromClaim", "FromClass");

  private ResourceClaimValidator() {}

  /** All problems of the claim; empty when the API server would accept it. */
  public static List<ValidationError> validate(ResourceClaim claim) {
    Errors e = new Errors(ref("ResourceClaim", claim.getMetadata()));
    Checks.objectName(e, claim.getMetadata());
    ClaimSpecChecks.spec(e, FieldPath.root("spec"), claim.getSpec());
    if (claim.getStatus() != null) {
      DeviceClaim devices = claim.getSpec() == null ? null : claim.getSpec().getDevices();
      status(
          e,
          FieldPath.root("status"),
          claim.getStatus(),
          ClaimSpecChecks.requestNames(devices == null ? new DeviceClaim() : devices));
    }
    return e.list();
  }

  /** All problems of the template; its {@code spec.spec} is checked like a claim's spec. */
  public static List<ValidationError> validate(ResourceClaimTemplate template) {
    Errors e = new Errors(ref("ResourceClaimTemplate", template.getMetadata()));
    Checks.objectName(e, template.getMetadata());
    if (template.getSpec() == null) {
      e.required(FieldPath.root("spec"), "");
    } else {
      ClaimSpecChecks.spec(e, FieldPath.root("spec", "spec"), template.getSpec().getSpec());
    }
    return e.list();
  }

  private static ObjectRef ref(String kind, ObjectMeta meta) {
    return meta == null
        ? new ObjectRef(kind, "", "")
        : new ObjectRef(kind, meta.getNamespace(), meta.getName());
  }

  private static void status(
      Errors e, FieldPath p, ResourceClaimStatus status, Map<String, Set<String>> names) {
    List<ResourceClaimConsumerReference> reserved = list(status.getReservedFor());
    FieldPath rp = p.child("reservedFor");
    if (e.withinLimit(rp, reserved, Limits.RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE)) {
      for (int i = 0; i < reserved.size(); i++) {
        ResourceClaimConsumerReference r =
            reserved.get(i) == null ? new ResourceClaimConsumerReference() : reserved.get(i);
        FieldPath ip = rp.index(i);
        if (isEmpty(r.getResource())) {
          e.required(ip.child("resource"), "");
        }
        if (isEmpty(r.getName())) {
          e.required(ip.child("name"), "");
        }
        if (isEmpty(r.getUid())) {
          e.required(ip.child("uid"), "");
        }
      }
      e.unique(rp, reserved, r -> r == null ? "" : r.getUid());
    }
    if (!reserved.isEmpty() && status.getAllocation() == null) {
      e.forbidden(rp, "may not be specified when `allocated` is not set");
    }
    if (status.getAllocation() != null) {
      allocation(e, p.child("allocation"), status.getAllocation(), names);
    }
  }

  private static void allocation(
      Errors e, FieldPath p, AllocationResult allocation, Map<String, Set<String>> names) {
    DeviceAllocationResult devices =
        allocation.getDevices() == null ? new DeviceAllocationResult() : allocation.getDevices();
    FieldPath dp = p.child("devices");
    List<DeviceRequestAllocationResult> results = list(devices.getResults());
    FieldPath rp = dp.child("results");
    if (e.withinLimit(rp, results, Limits.ALLOCATION_RESULTS_MAX_SIZE)) {
      for (int i = 0; i < results.size(); i++) {
        DeviceRequestAllocationResult r =
            results.get(i) == null ? new DeviceRequestAllocationResult() : results.get(i);
        FieldPath ip = rp.index(i);
        ClaimSpecChecks.requestRef(
            e, ip.child("request"), r.getRequest() == null ? "" : r.getRequest(), names);
        Checks.driverName(e, ip.child("driver"), r.getDriver());
        Checks.poolName(e, ip.child("pool"), r.getPool());
        Checks.requiredName(e, ip.child("device"), r.getDevice(), Names.deviceName(r.getDevice()));
        Checks.tolerations(e, ip.child("tolerations"), r.getTolerations());
      }
    }
    List<DeviceAllocationConfiguration> config = list(devices.getConfig());
    FieldPath cp = dp.child("config");
    if (e.withinLimit(cp, config, Limits.ALLOCATION_CONFIG_MAX_SIZE)) {
      for (int i = 0; i < config.size(); i++) {
        DeviceAllocationConfiguration c =
            config.get(i) == null ? new DeviceAllocationConfiguration() : config.get(i);
        FieldPath ip = cp.index(i);
        if (isEmpty(c.getSource())) {
          e.required(ip.child("source"), "");
        } else if (!CONFIG_SOURCES.contains(c.getSource())) {
          e.notSupported(ip.child("source"), c.getSource(), CONFIG_SOURCES);
        }
        ClaimSpecChecks.requestRefs(e, ip.child("requests"), list(c.getRequests()), names);
        Checks.opaque(e, ip, c.getOpaque());
      }
    }
  }
}
