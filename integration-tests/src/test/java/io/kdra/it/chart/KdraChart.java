package io.kdra.it.chart;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.Kubeconfigs;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.support.ServiceProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The chart under {@code helm/kdra}, rendered by the Helm that helm-java embeds (as helm-tests
 * does; in a child JVM, {@link HelmTemplate}), and the part of it the harness applies to the test
 * API server: the ServiceAccounts, the ClusterRoles, Roles and their bindings, the default
 * DeviceClasses and the ComputeClass CRD. The Deployments, the DaemonSet and their ConfigMaps are
 * not applied: the harness runs the services as processes instead, each with a token for its chart
 * ServiceAccount, so the API server's RBAC (kube-api-test starts it with {@code
 * --authorization-mode RBAC}) holds every service to what the chart grants.
 */
public final class KdraChart {

  public static final String RELEASE = "kdra";

  private static final String INSTANCE = "app.kubernetes.io/instance";

  /** The release namespace: the ServiceAccounts and the Leases' Roles live here. */
  public static final String NAMESPACE = Kubeconfigs.NAMESPACE;

  /** The GPU driver's name, as the chart configures it ({@code driverNames.gpu}). */
  public static final String GPU_DRIVER = "gpu.kdra.io";

  /** The chart's default DeviceClass for the GPU driver: all its devices, named as the driver. */
  public static final String GPU_CLASS = GPU_DRIVER;

  /** The claim-controller's Lease, the one name its Role may get and renew. */
  public static final String CONTROLLER_LEASE = "kdra-claim-controller";

  /** The slice-publisher's Lease (the chart's default lease-name). */
  public static final String PUBLISHER_LEASE = "kdra-slice-publisher";

  /** The computeclass-bridge's Lease (the chart's default lease-name). */
  public static final String BRIDGE_LEASE = "kdra-computeclass-bridge";

  public static final String PUBLISHER = "slice-publisher";
  public static final String DRIVER = "device-driver";
  public static final String CONTROLLER = "claim-controller";
  public static final String BRIDGE = "computeclass-bridge";

  /** What the harness applies; the workloads are the harness's processes instead. */
  private static final Set<String> APPLIED =
      Set.of(
          "ServiceAccount",
          "ClusterRole",
          "ClusterRoleBinding",
          "Role",
          "RoleBinding",
          "DeviceClass",
          "CustomResourceDefinition");

  /** A day: longer than any test run or demo session, so no token expires under a service. */
  private static final long TOKEN_SECONDS = 24 * 3600;

  private static List<HasMetadata> rendered;

  private KdraChart() {}

  /**
   * The chart's objects for the test cluster: every component on, the ComputeClass CRD installed
   * (no GKE here), the GPU driver named as the simulated nodes' driver.
   */
  public static synchronized List<HasMetadata> render() {
    if (rendered == null) {
      // in a child JVM: see HelmTemplate for why the harness never loads Helm itself
      String yaml =
          HelmTemplate.render(
              ServiceProcess.moduleDir("helm").resolve("kdra"),
              RELEASE,
              NAMESPACE,
              ControlPlane.VERSION,
              List.of(
                  "driverNames.gpu=" + GPU_DRIVER,
                  "computeClassBridge.enabled=true",
                  "computeClassBridge.installComputeClassCRD=true",
                  // the bridge's RBAC for Karpenter NodePools (KarpenterScaleOutIT): the harness
                  // applies the chart's RBAC, never its ConfigMaps, so scale-out itself is on
                  // only where a stack's properties turn it on
                  "computeClassBridge.config.scale-out.enabled=true",
                  "claimController.config.leader-election.lease-name=" + CONTROLLER_LEASE,
                  "slicePublisher.config.leader-election.lease-name=" + PUBLISHER_LEASE,
                  "computeClassBridge.config.leader-election.lease-name=" + BRIDGE_LEASE));
      List<HasMetadata> objects = new ArrayList<>();
      for (String doc : yaml.split("(?m)^---\\s*$")) {
        if (!doc.lines().allMatch(l -> l.isBlank() || l.trim().startsWith("#"))) {
          objects.add(Serialization.unmarshal(doc));
        }
      }
      rendered = List.copyOf(objects);
    }
    return rendered;
  }

  /**
   * Applies the chart's ServiceAccounts, RBAC, DeviceClasses and CRD (server-side apply, so again
   * is harmless) and waits until the CRD is served.
   */
  public static void install(KubernetesClient admin) {
    admin
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
        .serverSideApply();
    for (HasMetadata o : render()) {
      if (APPLIED.contains(o.getKind())) {
        admin.resource(o).forceConflicts().serverSideApply();
      }
    }
    for (HasMetadata o : render()) {
      if (o instanceof CustomResourceDefinition crd) {
        admin
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName(crd.getMetadata().getName())
            .waitUntilCondition(
                c ->
                    c != null
                        && c.getStatus() != null
                        && c.getStatus().getConditions().stream()
                            .anyMatch(
                                x ->
                                    x.getType().equals("Established")
                                        && x.getStatus().equals("True")),
                60,
                TimeUnit.SECONDS);
      }
    }
  }

  /** The chart's ServiceAccount of a component ({@code slice-publisher}, ...). */
  public static String serviceAccount(String component) {
    return render().stream()
        .filter(o -> o.getKind().equals("ServiceAccount"))
        .filter(
            o -> component.equals(o.getMetadata().getLabels().get("app.kubernetes.io/component")))
        .map(o -> o.getMetadata().getName())
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalStateException("the chart renders no ServiceAccount for " + component));
  }

  /** A token for the component's ServiceAccount (TokenRequest), as a Deployment's pod gets. */
  public static String token(KubernetesClient admin, String component) {
    return request(
        admin,
        component,
        new TokenRequestBuilder()
            .withNewSpec()
            .withExpirationSeconds(TOKEN_SECONDS)
            .endSpec()
            .build());
  }

  /**
   * A token bound to {@code pod}, as the kubelet mounts into a DaemonSet's pod: the API server puts
   * the pod's node into it, and the slice-publisher's TokenReview reads the node from there.
   */
  public static String token(KubernetesClient admin, String component, Pod pod) {
    return request(
        admin,
        component,
        new TokenRequestBuilder()
            .withNewSpec()
            .withExpirationSeconds(TOKEN_SECONDS)
            .withNewBoundObjectRef()
            .withApiVersion("v1")
            .withKind("Pod")
            .withName(pod.getMetadata().getName())
            .withUid(pod.getMetadata().getUid())
            .endBoundObjectRef()
            .endSpec()
            .build());
  }

  /** The audience of the drivers' tokens for the slice-publisher (the chart's default). */
  public static final String PUBLISHER_AUDIENCE = "kdra-slice-publisher";

  /**
   * A token for the slice-publisher bound to {@code pod}, as the chart projects into the driver
   * pods: for {@link #PUBLISHER_AUDIENCE} only.
   */
  public static String publisherToken(
      KubernetesClient admin, String namespace, String serviceAccount, Pod pod) {
    return admin
        .serviceAccounts()
        .inNamespace(namespace)
        .withName(serviceAccount)
        .tokenRequest(
            new TokenRequestBuilder()
                .withNewSpec()
                .withAudiences(PUBLISHER_AUDIENCE)
                .withExpirationSeconds(TOKEN_SECONDS)
                .withNewBoundObjectRef()
                .withApiVersion("v1")
                .withKind("Pod")
                .withName(pod.getMetadata().getName())
                .withUid(pod.getMetadata().getUid())
                .endBoundObjectRef()
                .endSpec()
                .build())
        .getStatus()
        .getToken();
  }

  /** The chart's driver ServiceAccount as the slice-publisher names it: namespace:name. */
  public static String driverAccount() {
    return NAMESPACE + ":" + serviceAccount(DRIVER);
  }

  private static String request(KubernetesClient admin, String component, TokenRequest request) {
    return admin
        .serviceAccounts()
        .inNamespace(NAMESPACE)
        .withName(serviceAccount(component))
        .tokenRequest(request)
        .getStatus()
        .getToken();
  }

  /**
   * The Pod object of the device-driver DaemonSet on {@code node}, with the chart's driver
   * ServiceAccount, already bound there: only so that its token names the node. Nothing runs it
   * (the driver is a process of the harness); the test kubelet leaves pods without claims alone.
   * Replaces a previous one, whose tokens then stop being valid.
   */
  public static Pod driverPod(KubernetesClient admin, String node) {
    return driverPod(admin, node, false);
  }

  /**
   * As above; on a real node ({@code real}) the kubelet runs the pod, so it is one the node can
   * run: busybox sleeping, from the node's own images (the driver itself runs outside, as a process
   * of the test).
   */
  public static Pod driverPod(KubernetesClient admin, String node, boolean real) {
    return driverPod(admin, node, real, false);
  }

  /**
   * As above; with {@code ownedByNode}, the pod has its Node as owner, as a static pod's mirror
   * has: an autoscaler then neither counts it as a workload that keeps the node from being empty
   * nor tries to move it (Karpenter skips pods owned by Nodes), and the garbage collector removes
   * it with the Node. For nodes an autoscaler launched and removes.
   */
  public static Pod driverPod(
      KubernetesClient admin, String node, boolean real, boolean ownedByNode) {
    String name = RELEASE + "-" + DRIVER + "-" + node;
    List<OwnerReference> owners = new ArrayList<>();
    if (ownedByNode) {
      Node n = admin.nodes().withName(node).get();
      if (n == null) {
        throw new IllegalStateException("no Node " + node + " to own its driver pod");
      }
      owners.add(
          new OwnerReferenceBuilder()
              .withApiVersion("v1")
              .withKind("Node")
              .withName(node)
              .withUid(n.getMetadata().getUid())
              .build());
    }
    admin.pods().inNamespace(NAMESPACE).withName(name).withGracePeriod(0).delete();
    admin
        .pods()
        .inNamespace(NAMESPACE)
        .withName(name)
        .waitUntilCondition(p -> p == null, 30, TimeUnit.SECONDS);
    return admin
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(NAMESPACE)
                .addToLabels("app.kubernetes.io/name", "kdra")
                .addToLabels("app.kubernetes.io/instance", RELEASE)
                .addToLabels("app.kubernetes.io/component", DRIVER)
                .withOwnerReferences(owners)
                .endMetadata()
                .withNewSpec()
                .withNodeName(node)
                .withServiceAccountName(serviceAccount(DRIVER))
                .withTerminationGracePeriodSeconds(real ? 1L : null)
                .addNewContainer()
                .withName(DRIVER)
                .withImage(real ? RealNode.BUSYBOX : "kdra/device-driver:it")
                .withImagePullPolicy(real ? "Never" : null)
                .withCommand(real ? List.of("sleep", "2147483647") : null)
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  /** A kubeconfig for the API server of {@code admin} that authenticates with {@code token}. */
  public static String kubeconfig(Config admin, Path caFile, String user, String token) {
    return Kubeconfigs.kubeconfig(admin, caFile, user, token);
  }

  /** Every object of the kinds the chart makes that carries the release's instance label. */
  public static List<HasMetadata> releaseObjects(
      KubernetesClient client, String namespace, String release) {
    List<HasMetadata> found = new ArrayList<>();
    found.addAll(client.rbac().clusterRoles().withLabel(INSTANCE, release).list().getItems());
    found.addAll(
        client.rbac().clusterRoleBindings().withLabel(INSTANCE, release).list().getItems());
    found.addAll(
        client.resources(DeviceClass.class).withLabel(INSTANCE, release).list().getItems());
    found.addAll(
        client
            .apps()
            .deployments()
            .inNamespace(namespace)
            .withLabel(INSTANCE, release)
            .list()
            .getItems());
    found.addAll(
        client
            .apps()
            .daemonSets()
            .inNamespace(namespace)
            .withLabel(INSTANCE, release)
            .list()
            .getItems());
    found.addAll(
        client.configMaps().inNamespace(namespace).withLabel(INSTANCE, release).list().getItems());
    found.addAll(
        client
            .serviceAccounts()
            .inNamespace(namespace)
            .withLabel(INSTANCE, release)
            .list()
            .getItems());
    found.addAll(
        client.services().inNamespace(namespace).withLabel(INSTANCE, release).list().getItems());
    found.addAll(
        client
            .rbac()
            .roles()
            .inNamespace(namespace)
            .withLabel(INSTANCE, release)
            .list()
            .getItems());
    found.addAll(
        client
            .rbac()
            .roleBindings()
            .inNamespace(namespace)
            .withLabel(INSTANCE, release)
            .list()
            .getItems());
    found.addAll(
        client
            .policy()
            .v1()
            .podDisruptionBudget()
            .inNamespace(namespace)
            .withLabel(INSTANCE, release)
            .list()
            .getItems());
    return found;
  }
}
