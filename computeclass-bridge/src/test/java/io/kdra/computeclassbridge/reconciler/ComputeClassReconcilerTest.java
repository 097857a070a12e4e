package io.kdra.computeclassbridge.reconciler;

import static io.kdra.computeclassbridge.TestData.computeClass;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplateBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kdra.computeclassbridge.RetryOnConflict;
import io.kdra.computeclassbridge.mapping.Labels;
import io.kdra.computeclassbridge.model.ComputeClass;
import io.kdra.computeclassbridge.model.Priority;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reconciler against the fabric8 mock API server (CRUD mode, no SSA, no garbage collector):
 * create, update (reorder, add, remove), delete, unknown type, a namespace labelled later, hand
 * edits and name conflicts. Each test uses its own ComputeClass and accelerator types, since the
 * operator and server are shared by all tests.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class ComputeClassReconcilerTest {

  private static final Duration WAIT = Duration.ofMinutes(2);
  private static final String SUFFIX = ".computeclass.kdra.io";

  @Inject KubernetesClient client;

  @BeforeEach
  void clusterBasics() throws IOException {
    if (client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName("computeclasses.cloud.google.com")
            .get()
        == null) {
      try (InputStream in = new FileInputStream("../helm/kdra/crds-optional/computeclass.yaml")) {
        client
            .resource(
                client.getKubernetesSerialization().unmarshal(in, CustomResourceDefinition.class))
            .create();
      }
    }
    namespace("team-a", true);
  }

  @Test
  void create_seedExampleGivesTwoDeviceClassesAndAnOrderedTemplate() {
    ComputeClass cc =
        create(
            computeClass(
                "seed", Priority.gpu("nvidia-tesla-a100", 1), Priority.gpu("nvidia-l4", 2)));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(subrequests("team-a", "seed"))
                  .containsExactly("nvidia-tesla-a100-x1:1", "nvidia-l4-x2:2");
              assertThat(deviceClass("nvidia-tesla-a100")).isNotNull();
              assertThat(deviceClass("nvidia-l4").getMetadata().getLabels())
                  .containsKey(Labels.usedBy("seed"));
              assertThat(condition("seed", "Ready"))
                  .satisfies(
                      c -> {
                        assertThat(c.getStatus()).isEqualTo("True");
                        assertThat(c.getObservedGeneration()).isEqualTo(generation("seed"));
                        assertThat(c.getMessage()).contains("nvidia-tesla-a100 x1, nvidia-l4 x2");
                      });
              assertThat(condition("seed", "Degraded").getStatus()).isEqualTo("False");
              assertThat(events("seed"))
                  .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("Applied"));
            });
    assertThat(
            client
                .resources(ComputeClass.class)
                .withName(cc.getMetadata().getName())
                .get()
                .getMetadata()
                .getFinalizers())
        .containsExactly("computeclass.kdra.io/cleanup");
  }

  @Test
  void update_reorderAddRemovePropagates() {
    create(
        computeClass(
            "upd", Priority.gpu("nvidia-a100-80gb", 1), Priority.gpu("nvidia-h100-80gb", 1)));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(subrequests("team-a", "upd"))
                    .containsExactly("nvidia-a100-80gb-x1:1", "nvidia-h100-80gb-x1:1"));

    edit("upd", Priority.gpu("nvidia-h100-80gb", 1), Priority.gpu("nvidia-a100-80gb", 1));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(subrequests("team-a", "upd"))
                  .containsExactly("nvidia-h100-80gb-x1:1", "nvidia-a100-80gb-x1:1");
              assertThat(condition("upd", "Ready").getObservedGeneration())
                  .isEqualTo(generation("upd"));
            });

    edit(
        "upd",
        Priority.gpu("nvidia-h100-80gb", 1),
        Priority.gpu("nvidia-a100-80gb", 1),
        Priority.gpu("nvidia-tesla-t4", 4));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(subrequests("team-a", "upd"))
                  .containsExactly(
                      "nvidia-h100-80gb-x1:1", "nvidia-a100-80gb-x1:1", "nvidia-tesla-t4-x4:4");
              assertThat(deviceClass("nvidia-tesla-t4")).isNotNull();
            });

    edit("upd", Priority.gpu("nvidia-a100-80gb", 1), Priority.gpu("nvidia-tesla-t4", 4));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(subrequests("team-a", "upd"))
                  .containsExactly("nvidia-a100-80gb-x1:1", "nvidia-tesla-t4-x4:4");
              assertThat(deviceClass("nvidia-h100-80gb")).as("no other user").isNull();
            });
  }

  /**
   * Why the tests edit through {@link RetryOnConflict}: a write by someone else (here the test
   * itself, as the reconciler does on a loaded machine) between {@code edit}'s read and its patch
   * makes the patch fail with 409; read and applied again, the change goes through.
   */
  @Test
  void anEditRacingAnotherWriteConflictsAndIsAppliedOnRetry() {
    create(computeClass("race", Priority.gpu("nvidia-h100-mega-80gb", 1)));
    var resource = client.resources(ComputeClass.class).withName("race");
    assertThat(
            org.assertj.core.api.Assertions.catchThrowableOfType(
                    io.fabric8.kubernetes.client.KubernetesClientException.class,
                    () ->
                        resource.edit(
                            cc -> {
                              writeMeanwhile("first");
                              cc.getSpec()
                                  .setPriorities(
                                      new java.util.ArrayList<>(
                                          List.of(Priority.gpu("nvidia-h100-mega-80gb", 2))));
                              return cc;
                            }))
                .getCode())
        .as("a plain edit racing a write")
        .isEqualTo(409);

    int[] attempts = {0};
    RetryOnConflict.edit(
        resource,
        cc -> {
          if (++attempts[0] == 1) {
            writeMeanwhile("second");
          }
          cc.getSpec()
              .setPriorities(
                  new java.util.ArrayList<>(List.of(Priority.gpu("nvidia-h100-mega-80gb", 2))));
          return cc;
        });
    // at least the one conflict the test made; the reconciler's own status write may add another
    assertThat(attempts[0]).isGreaterThanOrEqualTo(2);
    assertThat(resource.get().getMetadata().getLabels())
        .containsEntry("e2e.kdra.io/meanwhile", "second");
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(subrequests("team-a", "race"))
                    .containsExactly("nvidia-h100-mega-80gb-x2:2"));
  }

  /**
   * Several ComputeClasses naming one accelerator write one shared DeviceClass at once: whoever
   * writes second gets 409, a routine race that is applied again (no ApplyFailed Event), and in the
   * end every one of them is a recorded user.
   */
  @Test
  void computeClassesSharingADeviceClassAllBecomeItsUsersWithoutAWarning() {
    List<String> names = List.of("share-1", "share-2", "share-3", "share-4", "share-5");
    names.parallelStream()
        .forEach(n -> create(computeClass(n, Priority.gpu("nvidia-tesla-p4", 1))));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(deviceClass("nvidia-tesla-p4")).isNotNull();
              Map<String, String> labels = deviceClass("nvidia-tesla-p4").getMetadata().getLabels();
              names.forEach(n -> assertThat(labels).containsKey(Labels.usedBy(n)));
              names.forEach(n -> assertThat(condition(n, "Ready").getStatus()).isEqualTo("True"));
            });
    names.forEach(
        n ->
            assertThat(events(n))
                .noneSatisfy(e -> assertThat(e.getReason()).isEqualTo("ApplyFailed")));
  }

  /** Another client's write of ComputeClass race, as the reconciler's status update is. */
  private void writeMeanwhile(String value) {
    RetryOnConflict.edit(
        client.resources(ComputeClass.class).withName("race"),
        cc -> {
          cc.getMetadata().getLabels().put("e2e.kdra.io/meanwhile", value);
          return cc;
        });
  }

  @Test
  void delete_removesOnlyWhatWasGeneratedForIt() {
    DeviceClass handMade =
        client
            .resource(
                new DeviceClassBuilder()
                    .withNewMetadata()
                    .withName("hand-made")
                    .endMetadata()
                    .withNewSpec()
                    .endSpec()
                    .build())
            .create();
    create(computeClass("del-keep", Priority.gpu("nvidia-tesla-v100", 1)));
    create(
        computeClass(
            "del-go", Priority.gpu("nvidia-tesla-v100", 2), Priority.gpu("nvidia-tesla-p100", 1)));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(template("team-a", "del-go")).isNotNull();
              assertThat(template("team-a", "del-keep")).isNotNull();
              assertThat(deviceClass("nvidia-tesla-v100").getMetadata().getLabels())
                  .containsKeys(Labels.usedBy("del-keep"), Labels.usedBy("del-go"));
            });

    client.resources(ComputeClass.class).withName("del-go").delete();
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(client.resources(ComputeClass.class).withName("del-go").get()).isNull();
              assertThat(template("team-a", "del-go")).isNull();
              assertThat(deviceClass("nvidia-tesla-p100")).isNull();
              DeviceClass v100 = deviceClass("nvidia-tesla-v100");
              assertThat(v100.getMetadata().getLabels())
                  .containsKey(Labels.usedBy("del-keep"))
                  .doesNotContainKey(Labels.usedBy("del-go"));
              assertThat(v100.getMetadata().getOwnerReferences())
                  .extracting(o -> o.getName())
                  .containsExactly("del-keep");
            });
    assertThat(template("team-a", "del-keep")).isNotNull();
    assertThat(client.resource(handMade).get()).isNotNull();
  }

  @Test
  void unknownType_degradesNamingThePriorityAndMapsTheRest() {
    create(
        computeClass(
            "unk",
            Priority.gpu("nvidia-a1000", 1),
            Priority.gpu("nvidia-tesla-p4", 1),
            Priority.machineFamily("n2")));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(subrequests("team-a", "unk")).containsExactly("nvidia-tesla-p4-x1:1");
              Condition degraded = condition("unk", "Degraded");
              assertThat(degraded.getStatus()).isEqualTo("True");
              assertThat(degraded.getReason()).isEqualTo("PrioritiesNotMapped");
              assertThat(degraded.getMessage())
                  .startsWith("spec.priorities[0] (gpu nvidia-a1000 x1): unknown accelerator type");
              assertThat(condition("unk", "Ready").getMessage())
                  .contains("skipped spec.priorities[2] (machineFamily n2)");
              assertThat(events("unk"))
                  .anySatisfy(
                      e -> {
                        assertThat(e.getType()).isEqualTo("Warning");
                        assertThat(e.getReason()).isEqualTo("Degraded");
                      });
            });
  }

  @Test
  void namespaceLabelledLaterGetsTheTemplateAndLosesItWithTheLabel() {
    create(computeClass("late", Priority.gpu("nvidia-h200-141gb", 1)));
    await().atMost(WAIT).untilAsserted(() -> assertThat(template("team-a", "late")).isNotNull());
    namespace("team-late", false);
    namespace("team-late", true);
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(template("team-late", "late")).isNotNull();
              assertThat(condition("late", "Ready").getMessage()).contains("namespaces");
            });
    namespace("team-late", false);
    await().atMost(WAIT).untilAsserted(() -> assertThat(template("team-late", "late")).isNull());
  }

  @Test
  void handEditsAreReconciledBack() {
    create(computeClass("hand", Priority.gpu("nvidia-b200", 2)));
    await().atMost(WAIT).untilAsserted(() -> assertThat(template("team-a", "hand")).isNotNull());

    RetryOnConflict.edit(
        client.resources(ResourceClaimTemplate.class).inNamespace("team-a").withName("hand"),
        t -> {
          t.getSpec()
              .getSpec()
              .getDevices()
              .getRequests()
              .get(0)
              .getFirstAvailable()
              .get(0)
              .setCount(7L);
          return t;
        });
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> assertThat(subrequests("team-a", "hand")).containsExactly("nvidia-b200-x2:2"));

    client.resource(template("team-a", "hand")).delete();
    await().atMost(WAIT).untilAsserted(() -> assertThat(template("team-a", "hand")).isNotNull());

    String selector =
        deviceClass("nvidia-b200").getSpec().getSelectors().get(0).getCel().getExpression();
    RetryOnConflict.edit(
        client.resources(DeviceClass.class).withName("nvidia-b200" + SUFFIX),
        dc -> {
          dc.getSpec().getSelectors().get(0).getCel().setExpression("true");
          return dc;
        });
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(
                        deviceClass("nvidia-b200")
                            .getSpec()
                            .getSelectors()
                            .get(0)
                            .getCel()
                            .getExpression())
                    .isEqualTo(selector));
  }

  @Test
  void aTemplateNameTakenByHandIsLeftAloneAndReported() {
    ResourceClaimTemplate mine =
        client
            .resource(
                new ResourceClaimTemplateBuilder()
                    .withNewMetadata()
                    .withName("taken")
                    .withNamespace("team-a")
                    .endMetadata()
                    .withNewSpec()
                    .withNewSpec()
                    .withNewDevices()
                    .endDevices()
                    .endSpec()
                    .endSpec()
                    .build())
            .create();
    create(computeClass("taken", Priority.gpu("nvidia-rtx-pro-6000", 1)));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              Condition degraded = condition("taken", "Degraded");
              assertThat(degraded.getReason()).isEqualTo("NameConflict");
              assertThat(degraded.getMessage())
                  .contains("ResourceClaimTemplate team-a/taken already exists");
            });
    assertThat(template("team-a", "taken").getMetadata().getLabels()).isNullOrEmpty();
    assertThat(template("team-a", "taken").getSpec()).isEqualTo(mine.getSpec());
  }

  // --- helpers ---

  private ComputeClass create(ComputeClass cc) {
    cc.getMetadata().setUid(null);
    return client.resource(cc).create();
  }

  /** The reconciler writes the ComputeClass too (status, finalizer): retried on conflict. */
  private void edit(String name, Priority... priorities) {
    RetryOnConflict.edit(
        client.resources(ComputeClass.class).withName(name),
        cc -> {
          cc.getSpec().setPriorities(new java.util.ArrayList<>(List.of(priorities)));
          return cc;
        });
  }

  private void namespace(String name, boolean selected) {
    Map<String, String> labels =
        selected ? Map.of("computeclass.kdra.io/templates", "enabled") : Map.of("other", "x");
    client
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(labels)
                .endMetadata()
                .build())
        .createOr(op -> op.update());
  }

  private ResourceClaimTemplate template(String namespace, String name) {
    return client
        .resources(ResourceClaimTemplate.class)
        .inNamespace(namespace)
        .withName(name)
        .get();
  }

  private DeviceClass deviceClass(String type) {
    return client.resources(DeviceClass.class).withName(type + SUFFIX).get();
  }

  private List<String> subrequests(String namespace, String name) {
    ResourceClaimTemplate t = template(namespace, name);
    assertThat(t).as("template %s/%s", namespace, name).isNotNull();
    return t.getSpec().getSpec().getDevices().getRequests().get(0).getFirstAvailable().stream()
        .map((DeviceSubRequest s) -> s.getName() + ":" + s.getCount())
        .toList();
  }

  private Condition condition(String cc, String type) {
    ComputeClass current = client.resources(ComputeClass.class).withName(cc).get();
    assertThat(current.getStatus()).as("status of %s", cc).isNotNull();
    return current.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + type + " condition on " + cc));
  }

  private long generation(String cc) {
    Long g = client.resources(ComputeClass.class).withName(cc).get().getMetadata().getGeneration();
    return g == null ? 0 : g;
  }

  private List<Event> events(String cc) {
    return client.v1().events().inNamespace("default").list().getItems().stream()
        .filter(e -> cc.equals(e.getInvolvedObject().getName()))
        .toList();
  }
}
