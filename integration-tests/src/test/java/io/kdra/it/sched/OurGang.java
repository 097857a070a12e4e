package io.kdra.it.sched;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.SchedulerFeatures;
import io.kdra.claimcontroller.domain.TemplateMode;
import io.kdra.claimcontroller.k8s.ClaimWriter;
import io.kdra.claimcontroller.k8s.PodGroups;
import io.kdra.claimcontroller.k8s.PodWriter;
import io.kdra.claimcontroller.scheduling.ClaimTracer;
import io.kdra.claimcontroller.scheduling.ClusterView;
import io.kdra.claimcontroller.scheduling.DraCorePodAllocator;
import io.kdra.claimcontroller.scheduling.GangWhatIf;
import io.kdra.claimcontroller.scheduling.PodScheduling;
import io.kdra.claimcontroller.scheduling.RecentWrites;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.events.EventRecorder;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Our answer to a {@link GangScenario}: the claim-controller's gang pass ({@link
 * PodScheduling#whatIfGang}) over the scenario as an in-memory {@link ClusterView}, with dra-core's
 * allocator and the features kube-scheduler 1.37 has by default, claims made by
 * kube-controller-manager ({@link TemplateMode#ADOPT}), {@code TopologyAwareWorkloadScheduling}
 * off. It writes nothing: its writers point at an address where no API server listens, so a write
 * would fail the test.
 */
final class OurGang implements AutoCloseable {

  private final KubernetesClient nowhere =
      new KubernetesClientBuilder()
          .withConfig(
              new ConfigBuilder(Config.empty())
                  .withMasterUrl("https://127.0.0.1:9")
                  .withRequestRetryBackoffLimit(0)
                  .build())
          .build();

  GangWhatIf decide(GangScenario s) {
    PodScheduling scheduling =
        new PodScheduling(
            new View(s),
            new RecentWrites(),
            new PodScheduling.Writers(
                new ClaimWriter(nowhere, GangScenarioGenerator.SCHEDULER, 0),
                new PodWriter(nowhere, 0, Clock.systemUTC()),
                (pod, node) -> {
                  throw new IllegalStateException("a what-if binds " + pod.getMetadata().getName());
                },
                new EventRecorder(nowhere, GangScenarioGenerator.SCHEDULER, Clock.systemUTC())),
            new DraCorePodAllocator(
                AllocatorOptions.defaults(AllocatorFeatures.defaults(), () -> "share")),
            PodScheduling.Settings.of(TemplateMode.ADOPT, ClaimTracer.NOOP));
    scheduling.placeGangsWith(groups(s), new SchedulerFeatures(false));
    return scheduling
        .whatIfGang(s.trigger())
        .orElseThrow(() -> new IllegalStateException(s.name() + ": scheduled alone"));
  }

  @SuppressWarnings("unchecked")
  private static PodGroups groups(GangScenario s) {
    var g = s.podGroup();
    PodGroupPolicy policy =
        PodGroupPolicy.parse(
            g.getMetadata().getName(),
            g.getMetadata().getUid(),
            (Map<String, Object>) g.getAdditionalProperties().get("spec"),
            (Map<String, Object>) g.getAdditionalProperties().get("status"));
    return (namespace, name) ->
        GangScenario.NAMESPACE.equals(namespace) && policy.name().equals(name)
            ? Optional.of(policy)
            : Optional.empty();
  }

  @Override
  public void close() {
    nowhere.close();
  }

  /** The scenario as the informers would show it. */
  private record View(GangScenario s) implements ClusterView {
    @Override
    public List<Node> nodes() {
      return s.nodes();
    }

    @Override
    public List<Pod> pods() {
      return s.pods();
    }

    @Override
    public List<ResourceClaim> claims() {
      return s.claims();
    }

    @Override
    public Optional<ResourceClaim> claim(String namespace, String name) {
      return s.claims().stream()
          .filter(
              c ->
                  namespace.equals(c.getMetadata().getNamespace())
                      && name.equals(c.getMetadata().getName()))
          .findFirst();
    }

    @Override
    public Optional<ResourceClaimTemplate> template(String namespace, String name) {
      return s.templates().stream()
          .filter(
              t ->
                  namespace.equals(t.getMetadata().getNamespace())
                      && name.equals(t.getMetadata().getName()))
          .findFirst();
    }

    @Override
    public List<ResourceSlice> slices() {
      return s.slices();
    }

    @Override
    public List<DeviceClass> deviceClasses() {
      return s.classes();
    }
  }
}
