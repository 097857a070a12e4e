package io.kdra.computeclassbridge.mapping;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelector;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSelectorBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.computeclassbridge.catalog.Accelerator;
import io.kdra.computeclassbridge.model.ComputeClass;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;

/**
 * Builds the generated objects from the skeletons in {@code templates/*.yaml}: the fixed shape
 * lives in the YAML, the per-ComputeClass parts are filled in here. Pure: same input, equal output,
 * no API calls; the skeletons are parsed once.
 */
final class Manifests {

  private static final DeviceClass DEVICE_CLASS =
      load("templates/deviceclass.yaml", DeviceClass.class);
  private static final ResourceClaimTemplate TEMPLATE =
      load("templates/resourceclaimtemplate.yaml", ResourceClaimTemplate.class);

  private Manifests() {}

  /** The DeviceClass of one accelerator, used by {@code user} (labels and owner reference). */
  static DeviceClass deviceClass(
      String name, Accelerator accelerator, String selector, ComputeClass user) {
    return new DeviceClassBuilder(DEVICE_CLASS)
        .editMetadata()
        .withName(name)
        .addToLabels(Labels.ACCELERATOR, accelerator.type())
        .addToLabels(Labels.usedBy(user.getMetadata().getName()), "")
        .addToAnnotations(Labels.DESCRIPTION, accelerator.description())
        .withOwnerReferences(ownerReference(user))
        .endMetadata()
        .editSpec()
        .withSelectors(cel(selector))
        .endSpec()
        .build();
  }

  /** The template of one ComputeClass in one namespace, one subrequest per alternative. */
  static ResourceClaimTemplate template(
      ComputeClass computeClass,
      String namespace,
      String requestName,
      List<DeviceSubRequest> subrequests) {
    String name = computeClass.getMetadata().getName();
    DeviceRequest request =
        new DeviceRequestBuilder().withName(requestName).withFirstAvailable(subrequests).build();
    return new ResourceClaimTemplateBuilder(TEMPLATE)
        .editMetadata()
        .withName(name)
        .withNamespace(namespace)
        .addToLabels(Labels.COMPUTE_CLASS, Labels.value(name))
        .addToAnnotations(Labels.COMPUTE_CLASS_ANNOTATION, name)
        .withOwnerReferences(ownerReference(computeClass))
        .endMetadata()
        .editSpec()
        .editMetadata()
        .addToLabels(Labels.COMPUTE_CLASS, Labels.value(name))
        .endMetadata()
        .editSpec()
        .editDevices()
        .withRequests(request)
        .endDevices()
        .endSpec()
        .endSpec()
        .build();
  }

  /** One {@code firstAvailable} entry. */
  static DeviceSubRequest subrequest(Alternative alternative, Optional<String> topologySelector) {
    return new DeviceSubRequestBuilder()
        .withName(alternative.subrequestName())
        .withDeviceClassName(alternative.deviceClassName())
        .withAllocationMode("ExactCount")
        .withCount((long) alternative.count())
        .withSelectors(topologySelector.map(Manifests::cel).stream().toList())
        .build();
  }

  /**
   * Points at the ComputeClass so that Kubernetes' garbage collector removes what the bridge
   * generated even if the bridge is not running when the ComputeClass goes; not a controller
   * reference, because a shared DeviceClass has several owners.
   */
  static OwnerReference ownerReference(ComputeClass computeClass) {
    ObjectMeta meta = computeClass.getMetadata();
    return new OwnerReferenceBuilder()
        .withApiVersion(computeClass.getApiVersion())
        .withKind(computeClass.getKind())
        .withName(meta.getName())
        .withUid(meta.getUid())
        .build();
  }

  private static DeviceSelector cel(String expression) {
    return new DeviceSelectorBuilder().withNewCel().withExpression(expression).endCel().build();
  }

  private static <T> T load(String resource, Class<T> type) {
    try (InputStream in = Manifests.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(resource + " is missing from the application");
      }
      return Serialization.unmarshal(in, type);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
