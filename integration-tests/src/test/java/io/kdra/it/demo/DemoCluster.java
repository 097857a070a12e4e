package io.kdra.it.demo;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.nodes.TestKubelet;
import java.nio.file.Path;
import java.util.List;

/**
 * Where {@link Demo} tells its story: the services as processes beside the harness's control plane
 * ({@link ProcessCluster}), or the chart installed on a multi-node cluster ({@link ChartCluster}).
 * {@link Demo} starts it, applies the manifests and reports through it, and stops it (also while it
 * starts: on Ctrl-C).
 */
interface DemoCluster {

  /** Starts everything; returns once every node's devices are published. */
  void start();

  KubernetesClient client();

  /** Whether the nodes are real: the pods' containers run, their logs and CDI specs are read. */
  boolean real();

  /** How long one wait of the demo may take before it fails. */
  long settleTimeoutMs();

  /** Where the logs are, for a failed wait's message. */
  String logs();

  /** The test kubelet of {@code node}; null on real nodes. */
  TestKubelet testKubelet(String node);

  /** What the pod's container printed (real nodes). */
  List<String> containerLog(Pod pod, String container);

  /** The CDI spec file the driver of {@code node} wrote for {@code claim} (real nodes). */
  Path cdiSpec(String node, ResourceClaim claim);

  /** After the pods' report: what runs where (services, ports, Services), and what it shows. */
  void printAfterReport();

  /** How to reach the cluster with kubectl, or, with {@code --once}, that it goes at once. */
  void printAccess(boolean once);

  /** Stops everything it started and removes what it wrote, but for the logs; once. */
  void stop();
}
