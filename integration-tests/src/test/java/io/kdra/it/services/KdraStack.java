package io.kdra.it.services;

import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.controlplane.UpstreamControllers;
import io.kdra.it.nodes.RealNode;
import io.kdra.it.nodes.SimulatedNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Starts a {@link Stack} once per test class (after {@link ControlPlane}), stops it after the
 * class, also when tests fail, and writes logs and objects under {@code target/it-dumps/} for every
 * failed test. Register it in a static field:
 *
 * <pre>
 * &#64;RegisterExtension
 * static final KdraStack stack = KdraStack.nodes(SimulatedNode.twoL4s("node-a"), ...);
 * </pre>
 */
public final class KdraStack implements BeforeAllCallback, AfterAllCallback, TestWatcher {

  private final List<SimulatedNode> nodes;
  private final int bridges;
  private final int controllers;
  private final Map<String, String> properties;
  private final boolean real;
  private final boolean full;
  private final String name;
  private final Stack.Links links;

  /** Gates of this stack's own control plane and kubelets; empty: the shared control plane. */
  private final Map<String, Boolean> clusterGates;

  private Stack stack;
  private ControlPlane.Running ownControlPlane;

  private KdraStack(
      List<SimulatedNode> nodes,
      int bridges,
      int controllers,
      Map<String, String> properties,
      boolean real) {
    this(nodes, bridges, controllers, properties, real, false, null);
  }

  private KdraStack(
      List<SimulatedNode> nodes,
      int bridges,
      int controllers,
      Map<String, String> properties,
      boolean real,
      boolean full,
      String name) {
    this(nodes, bridges, controllers, properties, real, full, name, Stack.Links.NONE);
  }

  private KdraStack(
      List<SimulatedNode> nodes,
      int bridges,
      int controllers,
      Map<String, String> properties,
      boolean real,
      boolean full,
      String name,
      Stack.Links links) {
    this(nodes, bridges, controllers, properties, real, full, name, links, Map.of());
  }

  private KdraStack(
      List<SimulatedNode> nodes,
      int bridges,
      int controllers,
      Map<String, String> properties,
      boolean real,
      boolean full,
      String name,
      Stack.Links links,
      Map<String, Boolean> clusterGates) {
    this.clusterGates = clusterGates;
    this.links = links;
    this.full = full;
    this.name = name;
    this.real = real;
    this.nodes = nodes;
    this.bridges = bridges;
    this.controllers = controllers;
    this.properties = properties;
  }

  public static KdraStack nodes(SimulatedNode... nodes) {
    return new KdraStack(List.of(nodes), 0, 1, Map.of(), false);
  }

  /**
   * A stack whose nodes are {@link RealNode}s: the real kubelet and containerd each, with the
   * nodes' simulated inventories behind their device-drivers (the kubelet's plugins).
   */
  public static KdraStack realNodes(SimulatedNode... nodes) {
    return new KdraStack(List.of(nodes), 0, 1, Map.of(), true);
  }

  /** The same stack with the computeclass-bridge too. */
  public KdraStack withBridge() {
    return withBridges(1);
  }

  /**
   * The same stack with {@code n} computeclass-bridge replicas ({@code computeclass-bridge-1} ...
   * when more than one) electing a leader through a Lease in the test namespace.
   */
  public KdraStack withBridges(int n) {
    return new KdraStack(nodes, n, controllers, properties, real, full, name, links, clusterGates);
  }

  /** The same stack with these properties for every service (over the harness's own). */
  public KdraStack withProperties(Map<String, String> extra) {
    return new KdraStack(
        nodes, bridges, controllers, Map.copyOf(extra), real, full, name, links, clusterGates);
  }

  /**
   * The same stack with {@code n} claim-controller replicas ({@code claim-controller-1} ...)
   * electing a leader through a Lease in the test namespace.
   */
  public KdraStack withControllers(int n) {
    return new KdraStack(nodes, bridges, n, properties, real, full, name, links, clusterGates);
  }

  /**
   * The same stack with {@code n} slice-publisher replicas ({@code slice-publisher-1} ... when more
   * than one, electing a leader through the chart's Lease with a 6 s lease), each node's driver
   * dialling them through a {@link io.kdra.it.support.PausableProxy} of its own that spreads its
   * connections over them, as their Service would ({@link StackServices#publisherLink}).
   */
  public KdraStack withPublishers(int n) {
    return new KdraStack(
        nodes,
        bridges,
        controllers,
        properties,
        real,
        full,
        name,
        new Stack.Links(n, links.controllerApi(), links.webhook()),
        clusterGates);
  }

  /**
   * The same stack with each claim-controller replica reaching the API server through a {@link
   * io.kdra.it.support.PausableProxy} of its own ({@link StackServices#apiLink}), which the test
   * may pause or cut: a partition between that one service and the API server.
   */
  public KdraStack withControllerApiLinks() {
    return new KdraStack(
        nodes,
        bridges,
        controllers,
        properties,
        real,
        full,
        name,
        new Stack.Links(links.publishers(), true, links.webhook()),
        clusterGates);
  }

  /**
   * The same stack with every slice-publisher replica serving the admission webhook over HTTPS, as
   * the chart has it, behind one {@link io.kdra.it.support.PausableProxy} ({@link
   * StackServices#webhook}); the test registers the webhook configuration (needs {@link
   * #withPublishers}).
   */
  public KdraStack withPublisherWebhook() {
    return new KdraStack(
        nodes,
        bridges,
        controllers,
        properties,
        real,
        full,
        name,
        new Stack.Links(links.publishers(), links.controllerApi(), true),
        clusterGates);
  }

  /**
   * The same stack on a complete control plane: kube-scheduler and kube-controller-manager run
   * against the API server from before the services start until the stack closes ({@link
   * UpstreamControllers}), and the claim-controller's template mode is left to its default, as the
   * chart leaves it ({@code adopt}: kube-controller-manager's resourceclaim controller creates the
   * claims of templates).
   */
  public KdraStack fullControlPlane() {
    return new KdraStack(
        nodes, bridges, controllers, properties, real, true, name, links, clusterGates);
  }

  /**
   * The same stack named {@code name} (its namespace, logs and dumps) instead of after the test
   * class: the version matrix runs one class once per Kubernetes version.
   */
  public KdraStack named(String name) {
    return new KdraStack(
        nodes, bridges, controllers, properties, real, full, name, links, clusterGates);
  }

  /**
   * The same stack on a control plane of its own ({@link ControlPlane.Running#startOwn}) whose
   * kube-apiserver has these feature {@code gates} over the suite's, and whose real nodes' kubelets
   * have them in their configuration: a cluster where the admin turned an alpha gate on. The shared
   * API server's gates stay as every other class knows them (a gate on there would show in each of
   * their claim-controllers, which names every gate on in the API server and off in its allocator).
   * Costs an API server start; the gates must be known to the version under test.
   */
  public KdraStack withClusterFeatureGates(Map<String, Boolean> gates) {
    return new KdraStack(
        nodes, bridges, controllers, properties, real, full, name, links, Map.copyOf(gates));
  }

  public Stack get() {
    if (stack == null) {
      throw new IllegalStateException("the stack is started in beforeAll");
    }
    return stack;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    // mount namespaces, cgroups and containerd need root (CI runs as root; build-node.sh too)
    org.junit.jupiter.api.Assumptions.assumeTrue(
        !real || RealNode.runsAsRoot(), "real nodes need root: skipped");
    ControlPlane.Running cp;
    if (clusterGates.isEmpty()) {
      cp = ControlPlane.running(context);
    } else {
      ownControlPlane = ControlPlane.Running.startOwn(clusterGates);
      cp = ownControlPlane;
    }
    stack =
        Stack.start(
            cp.client(),
            cp.server().getKubeConfigYaml(),
            name != null ? name : context.getRequiredTestClass().getSimpleName(),
            nodes,
            bridges,
            controllers,
            properties,
            real,
            full ? cp : null,
            links,
            real ? clusterGates : Map.of());
  }

  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    if (stack != null) {
      stack.dump(context.getRequiredTestMethod().getName());
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    try {
      if (stack != null) {
        stack.close();
        stack = null;
      }
    } finally {
      // after the stack: its real nodes' kubelets and its services talk to this API server
      if (ownControlPlane != null) {
        ownControlPlane.close();
        ownControlPlane = null;
      }
    }
  }
}
