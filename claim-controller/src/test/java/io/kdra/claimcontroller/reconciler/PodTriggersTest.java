package io.kdra.claimcontroller.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kdra.claimcontroller.domain.K;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class PodTriggersTest {

  /** A pod cache over a map, with indexes computed on every lookup. */
  static final class MapCache implements IndexerResourceCache<Pod> {
    final Map<ResourceID, Pod> pods = new LinkedHashMap<>();
    final Map<String, Function<Pod, List<String>>> indexers = new HashMap<>();

    void put(Pod p) {
      pods.put(ResourceID.fromResource(p), p);
    }

    @Override
    public void addIndexers(Map<String, Function<Pod, List<String>>> more) {
      indexers.putAll(more);
    }

    @Override
    public List<Pod> byIndex(String index, String key) {
      return pods.values().stream()
          .filter(p -> indexers.get(index).apply(p).contains(key))
          .toList();
    }

    @Override
    public Optional<Pod> get(ResourceID id) {
      return Optional.ofNullable(pods.get(id));
    }

    @Override
    public Stream<ResourceID> keys() {
      return pods.keySet().stream();
    }

    @Override
    public Stream<Pod> list(Predicate<Pod> predicate) {
      return pods.values().stream().filter(predicate);
    }

    @Override
    public Stream<Pod> list(String namespace, Predicate<Pod> predicate) {
      return list(p -> namespace.equals(p.getMetadata().getNamespace()) && predicate.test(p));
    }
  }

  final MapCache cache = new MapCache();
  final PodTriggers triggers;

  PodTriggersTest() {
    cache.addIndexers(PodTriggers.podIndexers());
    triggers = new PodTriggers(cache);
  }

  static ResourceID id(String name) {
    return new ResourceID(name, K.NS);
  }

  static Pod named(String name, String claim) {
    return K.pod(name)
        .editSpec()
        .addNewResourceClaim()
        .withName("gpu")
        .withResourceClaimName(claim)
        .endResourceClaim()
        .endSpec()
        .build();
  }

  static ResourceClaim allocated(String name) {
    return K.allocated(K.claim(name)).build();
  }

  @Test
  void aClaimConcernsThePodsThatNameOrOwnItOnly() {
    Pod a = named("a", "shared");
    Pod b = named("b", "shared");
    Pod other = named("other", "elsewhere");
    Pod owner = K.podWithTemplate("owner", "gpu", "tpl");
    Pod recorded =
        new PodBuilder(K.podWithTemplate("recorded", "gpu", "tpl"))
            .editOrNewStatus()
            .addNewResourceClaimStatus()
            .withName("gpu")
            .withResourceClaimName("generated")
            .endResourceClaimStatus()
            .endStatus()
            .build();
    List.of(a, b, other, owner, recorded).forEach(cache::put);
    triggers.attempted(other, true);

    assertThat(triggers.forClaim(K.claim("shared").build()))
        .containsExactlyInAnyOrder(id("a"), id("b"));
    assertThat(
            triggers.forClaim(
                new ResourceClaimBuilder(K.claim("generated").build())
                    .editMetadata()
                    .addNewOwnerReference()
                    .withApiVersion("v1")
                    .withKind("Pod")
                    .withName("owner")
                    .withUid(owner.getMetadata().getUid())
                    .withController(true)
                    .endOwnerReference()
                    .endMetadata()
                    .build()))
        .containsExactlyInAnyOrder(id("owner"), id("recorded"));
  }

  static Pod member(String name, String group) {
    Pod p = K.pod(name).build();
    p.getSpec().setAdditionalProperty("schedulingGroup", Map.of("podGroupName", group));
    return p;
  }

  /**
   * A PodGroup's event concerns its pending members only: not those placed, not another group's,
   * not a pod of the same group name in another namespace.
   */
  @Test
  void aPodGroupConcernsItsPendingMembersOnly() {
    Pod waiting = member("w0", "train");
    Pod alsoWaiting = member("w1", "train");
    Pod placed =
        new PodBuilder(member("w2", "train")).editSpec().withNodeName("n").endSpec().build();
    Pod otherGroup = member("o0", "infer");
    Pod otherNamespace =
        new PodBuilder(member("x0", "train"))
            .editMetadata()
            .withNamespace("other")
            .endMetadata()
            .build();
    List.of(waiting, alsoWaiting, placed, otherGroup, otherNamespace).forEach(cache::put);

    assertThat(triggers.forPodGroup(K.NS, "train")).containsExactlyInAnyOrder(id("w0"), id("w1"));
    assertThat(triggers.forPodGroup(K.NS, "absent")).isEmpty();
  }

  @Test
  void aDeallocatedOrDeletedAllocatedClaimAlsoWakesTheUnschedulablePods() {
    Pod stuck = named("stuck", "mine");
    Pod placed = named("placed", "mine2");
    cache.put(stuck);
    cache.put(placed);
    triggers.attempted(stuck, true);
    triggers.attempted(placed, true);
    triggers.attempted(placed, false);

    assertThat(triggers.forClaim(allocated("x"))).isEmpty();
    assertThat(triggers.forClaim(K.claim("x").build()))
        .as("x deallocated")
        .containsExactly(id("stuck"));
    assertThat(triggers.forClaim(K.claim("x").build()))
        .as("a second event frees nothing")
        .isEmpty();
    assertThat(triggers.forClaim(K.claim("new").build())).as("a new claim frees nothing").isEmpty();

    ResourceClaim y = allocated("y");
    assertThat(triggers.forClaim(y)).isEmpty();
    triggers.deleting(y);
    assertThat(triggers.forClaim(y)).as("y deleted").containsExactly(id("stuck"));

    assertThat(triggers.forClusterChange()).containsExactly(id("stuck"));
    cache.pods.remove(id("stuck"));
    assertThat(triggers.forClusterChange()).as("a pod gone is forgotten").isEmpty();
  }

  /**
   * Upstream's queueing hints for NodePorts, NodeResourcesFit, InterPodAffinity and
   * PodTopologySpread: an assigned pod deleted (or finished) may free a port, resources or an
   * anti-affinity domain, so the unschedulable pods are tried again at once, not after backoff.
   */
  @Test
  void aPlacedPodGoneOrFinishedWakesTheUnschedulablePods() {
    Pod waiting = K.pod("waiting").build();
    cache.put(waiting);
    triggers.attempted(waiting, true);
    Pod placed = K.pod("placed").editSpec().withNodeName("node-a").endSpec().build();
    Pod pending = K.pod("other").build();
    Pod finished =
        new PodBuilder(placed).withNewStatus().withPhase("Succeeded").endStatus().build();

    assertThat(triggers.forPodChange(placed, true)).containsExactly(id("waiting"));
    assertThat(triggers.forPodChange(finished, false)).containsExactly(id("waiting"));
    assertThat(triggers.forPodChange(placed, false)).isEmpty();
    assertThat(triggers.forPodChange(pending, true)).isEmpty();
  }

  static Pod withUid(String name, String uid) {
    return new PodBuilder(K.pod(name).build()).editMetadata().withUid(uid).endMetadata().build();
  }

  /**
   * A pod deleted while it was tried and re-created under the same name (a StatefulSet's pod): the
   * late end of the old pod's attempt neither clears the new pod's mark nor marks the new pod.
   */
  @Test
  void anAttemptOfAPodReplacedUnderItsNameLeavesTheNewPodsMarkAlone() {
    Pod old = withUid("twin", "uid-old");
    Pod twin = withUid("twin", "uid-new");
    cache.put(twin);
    triggers.attempted(twin, true);

    triggers.attempted(old, false);
    assertThat(triggers.forClusterChange()).containsExactly(id("twin"));

    triggers.attempted(twin, false);
    triggers.attempted(old, true);
    assertThat(triggers.forClusterChange()).isEmpty();
  }

  @Test
  void aVolumeClaimWakesThePendingPodsWhoseVolumesUseIt() {
    Pod direct =
        K.pod("direct")
            .editSpec()
            .addNewVolume()
            .withName("v")
            .withNewPersistentVolumeClaim()
            .withClaimName("data")
            .endPersistentVolumeClaim()
            .endVolume()
            .endSpec()
            .build();
    Pod ephemeral =
        K.pod("web")
            .editSpec()
            .addNewVolume()
            .withName("data")
            .withNewEphemeral()
            .endEphemeral()
            .endVolume()
            .endSpec()
            .build();
    Pod placed =
        new PodBuilder(direct)
            .editMetadata()
            .withName("placed")
            .endMetadata()
            .editSpec()
            .withNodeName("node-a")
            .endSpec()
            .build();
    Pod other = K.pod("other").build();
    Stream.of(direct, ephemeral, placed, other).forEach(cache::put);
    assertThat(triggers.forVolumeClaim(pvc("data"))).containsExactly(id("direct"));
    assertThat(triggers.forVolumeClaim(pvc("web-data"))).containsExactly(id("web"));
    assertThat(triggers.forVolumeClaim(pvc("unused"))).isEmpty();
  }

  static io.fabric8.kubernetes.api.model.PersistentVolumeClaim pvc(String name) {
    return new io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace(K.NS)
        .withName(name)
        .endMetadata()
        .build();
  }
}
