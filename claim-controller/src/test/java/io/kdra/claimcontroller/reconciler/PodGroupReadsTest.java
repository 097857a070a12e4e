package io.kdra.claimcontroller.reconciler;

import static io.kdra.claimcontroller.domain.K.NS;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import io.kdra.claimcontroller.domain.PodGroupPolicy;
import io.kdra.claimcontroller.domain.PodSource;
import io.kdra.claimcontroller.k8s.ApiPodGroups;
import io.kdra.claimcontroller.k8s.PodGroups;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Where a scheduling attempt reads a member's PodGroup: from the PodGroup informer's cache where
 * one runs (no request per attempt), from the API server where none does (the API not served).
 */
@EnableKubernetesMockClient(crud = true)
class PodGroupReadsTest {

  KubernetesClient client;
  KubernetesMockServer server;

  /** An informer's cache, over a map. */
  static final class MapCache<T> implements Cache<T> {
    final Map<ResourceID, T> groups = new HashMap<>();

    @Override
    public Optional<T> get(ResourceID id) {
      return Optional.ofNullable(groups.get(id));
    }

    @Override
    public Stream<ResourceID> keys() {
      return groups.keySet().stream();
    }

    @Override
    public Stream<T> list(Predicate<T> p) {
      return groups.values().stream().filter(p);
    }
  }

  static GenericKubernetesResource podGroup(String name, int minCount, boolean deleting) {
    return new GenericKubernetesResourceBuilder()
        .withApiVersion(PodGroupPolicy.API_VERSION)
        .withKind("PodGroup")
        .withNewMetadata()
        .withNamespace(NS)
        .withName(name)
        .withUid("uid-" + name)
        .withDeletionTimestamp(deleting ? "2026-12-07T00:00:00Z" : null)
        .endMetadata()
        .addToAdditionalProperties(
            "spec", Map.of("schedulingPolicy", Map.of("gang", Map.of("minCount", minCount))))
        .build();
  }

  @Test
  void withAnInformerAttemptsReadTheCacheAndMakeNoRequest() {
    MapCache<GenericKubernetesResource> cache = new MapCache<>();
    GenericKubernetesResource train = podGroup("train", 3, false);
    cache.groups.put(ResourceID.fromResource(train), train);
    GenericKubernetesResource leaving = podGroup("leaving", 2, true);
    cache.groups.put(ResourceID.fromResource(leaving), leaving);
    PodGroups reads = PodGroupInformers.reads(cache, client);
    int before = server.getRequestCount();

    for (int attempt = 0; attempt < 5; attempt++) {
      assertThat(reads.get(NS, "train")).map(PodGroupPolicy::minCount).contains(3);
      assertThat(reads.get(NS, "missing")).isEmpty();
      assertThat(reads.get(NS, "leaving")).as("being deleted, as a GET reads it").isEmpty();
    }

    assertThat(server.getRequestCount() - before).isZero();
  }

  @Test
  void withoutAnInformerAttemptsReadTheApiServerAsBefore() {
    client
        .genericKubernetesResources(ApiPodGroups.CONTEXT)
        .inNamespace(NS)
        .resource(podGroup("train", 3, false))
        .create();
    PodGroups reads = PodGroupInformers.reads(null, client);

    assertThat(reads.get(NS, "train")).map(PodGroupPolicy::minCount).contains(3);
    assertThat(reads.get(NS, "missing")).isEmpty();
  }

  /**
   * The claim cleanup asks whether a claim's PodGroup is gone for every event of a group's claim:
   * where the informer runs, a group it has (being deleted too) costs no request; one it lacks, or
   * has under another UID, is asked of the API server before a reservation or claim is dropped.
   */
  @Test
  void withAnInformerTheClaimCleanupAsksNoRequestForAGroupThatExists() {
    MapCache<GenericKubernetesResource> cache = new MapCache<>();
    GenericKubernetesResource train = podGroup("train", 3, false);
    cache.groups.put(ResourceID.fromResource(train), train);
    GenericKubernetesResource leaving = podGroup("leaving", 2, true);
    cache.groups.put(ResourceID.fromResource(leaving), leaving);
    // the API server has them too, under the same UIDs
    for (GenericKubernetesResource g : cache.groups.values()) {
      client.genericKubernetesResources(ApiPodGroups.CONTEXT).inNamespace(NS).resource(g).create();
      g.getMetadata()
          .setUid(
              client
                  .genericKubernetesResources(ApiPodGroups.CONTEXT)
                  .inNamespace(NS)
                  .withName(g.getMetadata().getName())
                  .get()
                  .getMetadata()
                  .getUid());
    }
    PodSource source = ClaimReconciler.podSource(new MapCache<Pod>(), cache, client);
    String trainUid = train.getMetadata().getUid();
    String leavingUid = leaving.getMetadata().getUid();
    int before = server.getRequestCount();

    for (int event = 0; event < 5; event++) {
      assertThat(source.podGroupGone(NS, "train", trainUid)).isFalse();
      assertThat(source.podGroupGone(NS, "leaving", leavingUid)).as("still exists").isFalse();
    }

    assertThat(server.getRequestCount() - before).isZero();
  }

  @Test
  void withAnInformerAGroupItLacksIsGoneOnlyOnceTheApiServerSaysSo() {
    MapCache<GenericKubernetesResource> cache = new MapCache<>();
    GenericKubernetesResource stale = podGroup("train", 3, false);
    stale.getMetadata().setUid("uid-old");
    cache.groups.put(ResourceID.fromResource(stale), stale);
    String fresh =
        client
            .genericKubernetesResources(ApiPodGroups.CONTEXT)
            .inNamespace(NS)
            .resource(podGroup("fresh", 2, false))
            .create()
            .getMetadata()
            .getUid();
    PodSource source = ClaimReconciler.podSource(new MapCache<Pod>(), cache, client);

    assertThat(source.podGroupGone(NS, "fresh", fresh)).as("not seen yet").isFalse();
    assertThat(source.podGroupGone(NS, "train", "uid-train")).as("replaced").isTrue();
    assertThat(source.podGroupGone(NS, "missing", "uid-missing")).isTrue();
  }
}
