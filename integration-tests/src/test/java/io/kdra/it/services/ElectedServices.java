package io.kdra.it.services;

import static io.kdra.it.nodes.SimulatedNode.l4s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.it.chart.KdraChart;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The elected services of a control-plane fault test ({@code ApiServerOutageIT}, {@code
 * EtcdRestartIT}): two claim-controller replicas, two bridge replicas and one slice-publisher on
 * one node of simulated L4s; who holds each Lease, how often a replica stepped down, and what such
 * a test asks of them before and after the fault.
 */
public final class ElectedServices {

  /** The node whose devices are published. */
  public static final String NODE = "node-a";

  /** Issue 40's bound: scheduling and publishing within 30 s of the control plane's return. */
  public static final Duration RESUMED = Duration.ofSeconds(30);

  /** Each Lease, with the replicas that elect. */
  public static final Map<String, List<String>> LEASES;

  static {
    Map<String, List<String>> leases = new LinkedHashMap<>();
    leases.put(KdraChart.CONTROLLER_LEASE, List.of("claim-controller-1", "claim-controller-2"));
    leases.put(KdraChart.BRIDGE_LEASE, List.of("computeclass-bridge-1", "computeclass-bridge-2"));
    leases.put(KdraChart.PUBLISHER_LEASE, List.of("slice-publisher"));
    LEASES = Collections.unmodifiableMap(leases);
  }

  /** The component name each Lease's replicas log ("lost the <component> Lease"). */
  private static final Map<String, String> COMPONENT =
      Map.of(
          KdraChart.CONTROLLER_LEASE, "claim-controller",
          KdraChart.BRIDGE_LEASE, "computeclass-bridge",
          KdraChart.PUBLISHER_LEASE, "slice-publisher");

  private final Stack stack;
  private final KubernetesClient client;
  private final int devices;

  private ElectedServices(Stack stack, int devices) {
    this.stack = stack;
    this.client = stack.client;
    this.devices = devices;
  }

  /** The stack: {@code devices} L4s on {@link #NODE}, two controllers, two bridges. */
  public static KdraStack stack(int devices) {
    return KdraStack.nodes(l4s(NODE, devices)).withControllers(2).withBridges(2);
  }

  /**
   * The services of {@code stack} (made by {@link #stack(int)}), once {@link #NODE}'s devices are
   * published and every Lease is held by one of its replicas.
   */
  public static ElectedServices publishedAndLed(Stack stack, int devices) {
    ElectedServices services = new ElectedServices(stack, devices);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(Dra.publishedDevices(services.client, NODE)).isEqualTo(devices);
              LEASES.forEach(
                  (lease, replicas) -> assertThat(services.holder(lease)).isIn(replicas));
            });
    return services;
  }

  /** What a fault is measured against: each Lease's holder, its step-downs, every restart. */
  public record Before(
      Map<String, String> leaders, Map<String, Integer> stepDowns, Map<String, Integer> restarts) {}

  /** The services now, before a fault. */
  public Before before() {
    Map<String, String> leaders = new LinkedHashMap<>();
    LEASES.keySet().forEach(lease -> leaders.put(lease, holder(lease)));
    Map<String, Integer> stepDowns = new LinkedHashMap<>();
    leaders.forEach((lease, leader) -> stepDowns.put(leader, stepDowns(lease, leader)));
    Map<String, Integer> restarts = new LinkedHashMap<>();
    stack.services.processNames().forEach(n -> restarts.put(n, stack.services.restarts(n)));
    return new Before(leaders, stepDowns, restarts);
  }

  /** Waits until every leader of {@code before} has logged that it lost its Lease once more. */
  public void awaitEveryLeaderSteppedDown(Before before, Duration atMost) {
    await()
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(250))
        .untilAsserted(
            () ->
                before
                    .leaders()
                    .forEach(
                        (lease, leader) ->
                            assertThat(stepDowns(lease, leader))
                                .as(leader + " stepped down")
                                .isGreaterThan(before.stepDowns().get(leader))));
  }

  /** Deletes {@link #NODE}'s slices and waits until they are published again. */
  public void awaitSlicesPublishedAgain() {
    client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> NODE.equals(s.getSpec().getNodeName()))
        .forEach(s -> client.resource(s).delete());
    await()
        .atMost(RESUMED)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> Dra.publishedDevices(client, NODE) == devices);
  }

  /** Waits until every Lease is held by one of its replicas and renewed after {@code returned}. */
  public void awaitLeasesRenewedAfter(ZonedDateTime returned) {
    await()
        .atMost(RESUMED)
        .untilAsserted(
            () ->
                LEASES.forEach(
                    (lease, replicas) -> {
                      Lease l = lease(lease);
                      assertThat(l.getSpec().getHolderIdentity()).as(lease).isIn(replicas);
                      assertThat(l.getSpec().getRenewTime()).as(lease).isAfter(returned);
                    }));
  }

  /** No service exited, none was started again since {@code before}. */
  public void assertNoneExitedOrRestarted(Before before) {
    for (String name : stack.services.processNames()) {
      assertThat(stack.services.process(name).alive()).as(name + " runs").isTrue();
      assertThat(stack.services.restarts(name))
          .as(name + " restarts")
          .isEqualTo(before.restarts().get(name));
    }
  }

  /** How often {@code replica}'s log says it lost {@code lease}'s leadership. */
  private int stepDowns(String lease, String replica) {
    try {
      String log = Files.readString(stack.services.process(replica).log);
      String line = "lost the " + COMPONENT.get(lease) + " Lease";
      int n = 0;
      for (int i = log.indexOf(line); i >= 0; i = log.indexOf(line, i + 1)) {
        n++;
      }
      return n;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Lease lease(String name) {
    return client.leases().inNamespace(KdraChart.NAMESPACE).withName(name).get();
  }

  private String holder(String name) {
    Lease l = lease(name);
    return l == null || l.getSpec() == null ? null : l.getSpec().getHolderIdentity();
  }
}
