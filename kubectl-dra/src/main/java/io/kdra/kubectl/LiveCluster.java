package io.kdra.kubectl;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.claimcontroller.domain.VolumeObjects;
import io.kdra.core.taint.DeviceTaintRule;
import io.kdra.core.taint.DeviceTaintRules;
import java.io.File;
import java.io.PrintStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The I/O: a fabric8 client from the kubeconfig as kubectl picks it ({@code --kubeconfig}, else
 * {@code KUBECONFIG}, else {@code ~/.kube/config}; {@code --context}), and the reads. Failures are
 * left to {@link Errors}; nothing is written.
 */
final class LiveCluster implements AutoCloseable {

  /** A request gets this long; a command line should not hang on an unreachable server. */
  private static final int TIMEOUT_MS = 15_000;

  private final KubernetesClient client;
  private final String namespace;
  private final PrintStream warnings;

  /**
   * A client for the kubeconfig's context.
   *
   * @throws IllegalArgumentException naming the kubeconfig or the context when either is missing
   */
  LiveCluster(String kubeconfig, String context, String namespace, PrintStream warnings) {
    this.warnings = warnings;
    if (kubeconfig != null && !new File(kubeconfig).isFile()) {
      throw new IllegalArgumentException("kubeconfig " + kubeconfig + ": no such file");
    }
    if (kubeconfig == null
        && System.getenv("KUBERNETES_SERVICE_HOST") == null
        && Config.getKubeconfigFilenames().stream().noneMatch(f -> new File(f).isFile())) {
      // else fabric8 would try the in-cluster address and fail with an unresolvable host
      throw new IllegalArgumentException(
          "no kubeconfig: none at "
              + String.join(", ", Config.getKubeconfigFilenames())
              + "; set KUBECONFIG or pass --kubeconfig");
    }
    Config config =
        kubeconfig != null
            ? Config.fromKubeconfig(context, new File(kubeconfig))
            : Config.autoConfigure(context);
    // fabric8 falls back to the current context; kubectl refuses a context it does not know
    if (context != null
        && (config.getCurrentContext() == null
            || !context.equals(config.getCurrentContext().getName()))) {
      throw new IllegalArgumentException(
          "context \"" + context + "\" does not exist in the " + "kubeconfig");
    }
    config.setConnectionTimeout(TIMEOUT_MS);
    config.setRequestTimeout(TIMEOUT_MS);
    config.setRequestRetryBackoffLimit(0);
    this.namespace =
        namespace != null
            ? namespace
            : config.getNamespace() != null ? config.getNamespace() : "default";
    this.client = new KubernetesClientBuilder().withConfig(config).build();
  }

  /** The namespace commands use: {@code -n}, else the context's, else {@code default}. */
  String namespace() {
    return namespace;
  }

  String server() {
    return client.getConfiguration().getMasterUrl();
  }

  /**
   * Everything the claim-controller's informers hold, read once; the slices carry the
   * DeviceTaintRules' taints (where the API server serves them), each naming its rule.
   */
  ClusterState state() {
    return new ClusterState(
        client.nodes().list().getItems(),
        client.pods().inAnyNamespace().list().getItems(),
        client.resources(ResourceClaim.class).inAnyNamespace().list().getItems(),
        client.resources(ResourceClaimTemplate.class).inAnyNamespace().list().getItems(),
        DeviceTaintRules.apply(client.resources(ResourceSlice.class).list().getItems(), rules()),
        client.resources(DeviceClass.class).list().getItems(),
        namespaceLabels(),
        volumes());
  }

  /** Each namespace's labels; none (with a warning) where namespaces may not be listed. */
  private Map<String, Map<String, String>> namespaceLabels() {
    try {
      Map<String, Map<String, String>> labels = new HashMap<>();
      for (Namespace ns : client.namespaces().list().getItems()) {
        Map<String, String> l = ns.getMetadata().getLabels();
        labels.put(ns.getMetadata().getName(), l == null ? Map.of() : l);
      }
      return labels;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 403) {
        throw e;
      }
      warnings.println(
          "warning: cannot list namespaces (forbidden): pod affinity terms with a namespace"
              + " selector match no namespace here; grant list on namespaces to see them as the"
              + " scheduler does");
      return Map.of();
    }
  }

  /**
   * What the scheduler's volume filters read; null (with a warning) where one kind may not be
   * listed: the answer then leaves the volume filters out rather than call every claim missing.
   */
  private VolumeObjects volumes() {
    try {
      return VolumeObjects.of(
          client.persistentVolumeClaims().inAnyNamespace().list().getItems(),
          client.persistentVolumes().list().getItems(),
          client.storage().v1().storageClasses().list().getItems(),
          client.storage().v1().csiNodes().list().getItems(),
          client.storage().v1().csiDrivers().list().getItems(),
          client.storage().v1().csiStorageCapacities().inAnyNamespace().list().getItems());
    } catch (KubernetesClientException e) {
      if (e.getCode() != 403) {
        throw e;
      }
      warnings.println(
          "warning: cannot list persistentvolumeclaims, persistentvolumes, storageclasses,"
              + " csinodes, csidrivers or csistoragecapacities (forbidden): the volume filters are"
              + " not applied; grant list on them to see them as the scheduler does");
      return null;
    }
  }

  /** The DeviceTaintRules, none where the API server serves no v1 ones (before 1.37). */
  private List<DeviceTaintRule> rules() {
    if (!client.supports(DeviceTaintRule.class)) {
      return List.of();
    }
    try {
      return client.resources(DeviceTaintRule.class).list().getItems();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 403) {
        throw e;
      }
      // a reader granted only the core DRA objects still gets its answer, told what is missing
      warnings.println(
          "warning: cannot list DeviceTaintRules (forbidden): taints from rules are not shown and"
              + " not applied; grant get, list on devicetaintrules.resource.k8s.io to see them");
      return List.of();
    }
  }

  Optional<Pod> pod(String name) {
    return Optional.ofNullable(client.pods().inNamespace(namespace).withName(name).get());
  }

  Optional<ResourceClaim> claim(String name) {
    return Optional.ofNullable(
        client.resources(ResourceClaim.class).inNamespace(namespace).withName(name).get());
  }

  @Override
  public void close() {
    client.close();
  }
}
