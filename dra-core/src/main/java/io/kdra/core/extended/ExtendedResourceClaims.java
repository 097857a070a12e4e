package io.kdra.core.extended;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerExtendedResourceRequest;
import io.fabric8.kubernetes.api.model.ContainerExtendedResourceRequestBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodExtendedResourceClaimStatus;
import io.fabric8.kubernetes.api.model.PodExtendedResourceClaimStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;

/**
 * The special claim for a pod's extended resources served by DRA, as kube-scheduler builds it
 * ({@code preFilterExtendedResources}, {@code createRequestsAndMappings}, {@code
 * createExtendedResourceClaimInAPI}): one request per container and resource, named {@code
 * container-<i>-request-<j>} ({@code i} the container's index in init containers followed by
 * containers, {@code j} the resource's index among the container's request names, sorted), for the
 * class that serves the resource, in {@code ExactCount} mode. Non-sidecar init containers reuse the
 * requests of the long-lived containers after them and then share one request, the largest, since
 * they run one at a time. Requests are sorted by name.
 */
public final class ExtendedResourceClaims {

  /** The annotation that marks the special claim ({@code ExtendedResourceClaimAnnotation}). */
  public static final String ANNOTATION = "resource.kubernetes.io/extended-resource-claim";

  /**
   * Upstream's name for the claim before it is created: not a valid object name, so it never
   * collides with a stored claim.
   */
  public static final String IN_MEMORY_NAME = "<extended-resources>";

  private ExtendedResourceClaims() {}

  /** The claim's requests and the pod status's request mappings. */
  public record Spec(
      List<DeviceRequest> requests, List<ContainerExtendedResourceRequest> mappings) {}

  /**
   * The requests and mappings for {@code viaDra} (resource name to count, what the chosen node
   * serves by DRA; see {@link ExtendedResourceFit}).
   */
  public static Spec spec(
      Pod pod, SortedMap<String, Long> viaDra, ExtendedResourceClasses classes) {
    List<Container> containers = new ArrayList<>();
    int numInit =
        pod.getSpec().getInitContainers() == null ? 0 : pod.getSpec().getInitContainers().size();
    if (numInit > 0) {
      containers.addAll(pod.getSpec().getInitContainers());
    }
    if (pod.getSpec().getContainers() != null) {
      containers.addAll(pod.getSpec().getContainers());
    }
    List<Integer> longLived = new ArrayList<>();
    List<Integer> shortLived = new ArrayList<>();
    for (int i = 0; i < containers.size(); i++) {
      boolean sidecar = "Always".equals(containers.get(i).getRestartPolicy());
      (i < numInit && !sidecar ? shortLived : longLived).add(i);
    }
    List<DeviceRequest> requests = new ArrayList<>();
    List<ContainerExtendedResourceRequest> mappings = new ArrayList<>();
    for (String resource : viaDra.keySet()) {
      Optional<DeviceClass> cls = classes.classFor(resource);
      if (cls.isEmpty()) {
        continue;
      }
      String className = cls.get().getMetadata().getName();
      List<ContainerExtendedResourceRequest> longMappings = new ArrayList<>();
      List<ContainerExtendedResourceRequest> shortMappings = new ArrayList<>();
      DeviceRequest[] longRequests = new DeviceRequest[containers.size()];
      for (int i : longLived) {
        PerContainer pc = perContainer(i, containers.get(i), resource, className, List.of());
        longRequests[i] = pc.request();
        longMappings.addAll(pc.mappings());
      }
      DeviceRequest maxShort = null;
      Set<String> shortNames = new HashSet<>();
      for (int i : shortLived) {
        List<DeviceRequest> reusable = new ArrayList<>();
        for (int k = i; k < longRequests.length; k++) {
          reusable.add(longRequests[k]);
        }
        PerContainer pc = perContainer(i, containers.get(i), resource, className, reusable);
        if (pc.request() != null) {
          shortNames.add(pc.request().getName());
          if (maxShort == null || count(maxShort) < count(pc.request())) {
            maxShort = pc.request();
          }
        }
        shortMappings.addAll(pc.mappings());
      }
      if (maxShort != null && shortNames.size() > 1) {
        shortNames.remove(maxShort.getName());
        for (int m = 0; m < shortMappings.size(); m++) {
          ContainerExtendedResourceRequest x = shortMappings.get(m);
          if (shortNames.contains(x.getRequestName())) {
            shortMappings.set(
                m, mapping(x.getContainerName(), x.getResourceName(), maxShort.getName()));
          }
        }
      }
      if (maxShort != null) {
        requests.add(maxShort);
      }
      for (DeviceRequest r : longRequests) {
        if (r != null) {
          requests.add(r);
        }
      }
      mappings.addAll(longMappings);
      mappings.addAll(shortMappings);
    }
    requests.sort(Comparator.comparing(DeviceRequest::getName));
    return new Spec(List.copyOf(requests), List.copyOf(mappings));
  }

  private record PerContainer(
      DeviceRequest request, List<ContainerExtendedResourceRequest> mappings) {}

  /** Upstream's {@code createResourceRequestAndMappings}. */
  private static PerContainer perContainer(
      int index, Container c, String resource, String className, List<DeviceRequest> reusable) {
    Map<String, Quantity> creqs = ExtendedResourceRequests.containerRequests(c);
    Quantity q = creqs.get(resource);
    if (q == null) {
      return new PerContainer(null, List.of());
    }
    long wanted = ExtendedResourceRequests.exactCount(q).orElse(0L);
    if (wanted == 0) {
      return new PerContainer(null, List.of());
    }
    List<ContainerExtendedResourceRequest> mappings = new ArrayList<>();
    long sum = 0;
    for (DeviceRequest r : reusable) {
      if (r != null) {
        sum += count(r);
        mappings.add(mapping(c.getName(), resource, r.getName()));
        if (sum >= wanted) {
          return new PerContainer(null, mappings);
        }
      }
    }
    // containerRequests is sorted by name: the resource's index among them
    int ridx = new ArrayList<>(creqs.keySet()).indexOf(resource);
    String name = "container-" + index + "-request-" + ridx;
    DeviceRequest request =
        new DeviceRequestBuilder()
            .withName(name)
            .withNewExactly()
            .withDeviceClassName(className)
            .withAllocationMode("ExactCount")
            .withCount(wanted - sum)
            .endExactly()
            .build();
    mappings.add(mapping(c.getName(), resource, name));
    return new PerContainer(request, mappings);
  }

  private static long count(DeviceRequest r) {
    return r.getExactly().getCount();
  }

  private static ContainerExtendedResourceRequest mapping(
      String container, String resource, String request) {
    return new ContainerExtendedResourceRequestBuilder()
        .withContainerName(container)
        .withResourceName(resource)
        .withRequestName(request)
        .build();
  }

  /**
   * The claim to create for {@code pod} with {@code spec}: in the pod's namespace, named {@code
   * <pod>-extended-resources-<random>} by the API server, annotated, controlled by the pod
   * (upstream's owner reference: {@code controller: true}, no {@code blockOwnerDeletion}). Its name
   * and UID are upstream's in-memory placeholders until it is created.
   *
   * @param placeholderUid a UID to track the allocation by until the API server gives one
   */
  public static ResourceClaim desired(Pod pod, Spec spec, String placeholderUid) {
    return new ResourceClaimBuilder()
        .withNewMetadata()
        .withNamespace(pod.getMetadata().getNamespace())
        .withName(IN_MEMORY_NAME)
        .withUid(placeholderUid)
        .withGenerateName(pod.getMetadata().getName() + "-extended-resources-")
        .withOwnerReferences(ownerRef(pod))
        .addToAnnotations(ANNOTATION, "true")
        .endMetadata()
        .withNewSpec()
        .withNewDevices()
        .withRequests(spec.requests())
        .endDevices()
        .endSpec()
        .build();
  }

  /** The pod's {@code status.extendedResourceClaimStatus} once {@code claimName} exists. */
  public static PodExtendedResourceClaimStatus status(Spec spec, String claimName) {
    return new PodExtendedResourceClaimStatusBuilder()
        .withRequestMappings(spec.mappings())
        .withResourceClaimName(claimName)
        .build();
  }

  private static OwnerReference ownerRef(Pod pod) {
    return new OwnerReferenceBuilder()
        .withApiVersion("v1")
        .withKind("Pod")
        .withName(pod.getMetadata().getName())
        .withUid(pod.getMetadata().getUid())
        .withController(true)
        .build();
  }

  /** True for the claim before it is created (upstream's {@code isSpecialClaimName}). */
  public static boolean isInMemory(ResourceClaim c) {
    return IN_MEMORY_NAME.equals(c.getMetadata().getName());
  }

  /**
   * The pod's special claim among {@code claims}, if one exists (upstream's {@code
   * findExtendedResourceClaim}): annotated, and controlled by the pod by name and UID.
   */
  public static Optional<ResourceClaim> find(Pod pod, Collection<ResourceClaim> claims) {
    for (ResourceClaim c : claims) {
      if (isSpecialClaim(c) && c.getMetadata().getOwnerReferences() != null) {
        for (OwnerReference o : c.getMetadata().getOwnerReferences()) {
          if (pod.getMetadata().getName().equals(o.getName())
              && Boolean.TRUE.equals(o.getController())
              && pod.getMetadata().getUid().equals(o.getUid())) {
            return Optional.of(c);
          }
        }
      }
    }
    return Optional.empty();
  }

  /** True for a claim annotated as a special claim. */
  public static boolean isSpecialClaim(ResourceClaim c) {
    return c.getMetadata().getAnnotations() != null
        && "true".equals(c.getMetadata().getAnnotations().get(ANNOTATION));
  }
}
