package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;

/**
 * The soak's computeclass-bridge churn: ComputeClasses of {@link #NAMES} created, changed and
 * deleted at random while pods use their templates, and the invariant that, once settled, every
 * ComputeClass's DeviceClasses and template are what the bridge makes of it (its documented
 * mapping: a template named after it in the soak's namespace whose one request lists, in priority
 * order, one subrequest {@code <type>-x<count>} per GPU priority, of the DeviceClass {@code
 * <type>.computeclass.kdra.io}, which names the ComputeClass as a user), its status Ready for its
 * generation, and nothing is left of a deleted one (no template, no DeviceClass use, no DeviceClass
 * without a user, no ComputeClass stuck in deletion).
 *
 * <p>Every variant lists both GPU types of the soak's nodes, so a pod from any of these templates
 * can run on any free device (as {@link SoakInvariants}' pending-pod invariant assumes); they
 * differ in order and in a priority without a GPU, which the bridge skips.
 */
final class SoakBridge {

  static final List<String> NAMES = List.of("soak-cc-0", "soak-cc-1");

  static final ResourceDefinitionContext COMPUTE_CLASS =
      new ResourceDefinitionContext.Builder()
          .withGroup("cloud.google.com")
          .withVersion("v1")
          .withKind("ComputeClass")
          .withPlural("computeclasses")
          .withNamespaced(false)
          .build();

  private static final String MANAGED_BY = "app.kubernetes.io/managed-by";
  private static final String BRIDGE = "kdra-computeclass-bridge";
  private static final String NAME_LABEL = "computeclass.kdra.io/name";
  private static final String USED_BY = "used-by.computeclass.kdra.io/";
  private static final String SUFFIX = ".computeclass.kdra.io";

  private static final String L4 = "- gpu: {type: nvidia-l4, count: 1}\n";
  private static final String A100 = "- gpu: {type: nvidia-tesla-a100, count: 1}\n";
  private static final String NO_GPU = "- machineFamily: n2\n";

  /** The priorities a ComputeClass may have. */
  private static final List<String> VARIANTS =
      List.of(A100 + L4, L4 + A100, NO_GPU + L4 + A100, A100 + NO_GPU + L4);

  private final KubernetesClient client;
  private final String namespace;
  private final Random random;

  SoakBridge(KubernetesClient client, String namespace, Random random) {
    this.client = client;
    this.namespace = namespace;
    this.random = random;
  }

  /**
   * Creates a ComputeClass of {@link #NAMES}, changes its priorities, or deletes it; returns the
   * operation's name.
   */
  String churn() {
    String name = NAMES.get(random.nextInt(NAMES.size()));
    var resource = client.genericKubernetesResources(COMPUTE_CLASS).withName(name);
    GenericKubernetesResource now = resource.get();
    String variant = VARIANTS.get(random.nextInt(VARIANTS.size()));
    if (now == null) {
      client
          .genericKubernetesResources(COMPUTE_CLASS)
          .resource(computeClass(name, variant))
          .create();
      return "create-computeclass";
    }
    if (now.getMetadata().getDeletionTimestamp() == null && random.nextBoolean()) {
      GenericKubernetesResource changed = computeClass(name, variant);
      changed.getMetadata().setResourceVersion(now.getMetadata().getResourceVersion());
      changed.getMetadata().setFinalizers(now.getMetadata().getFinalizers());
      client.genericKubernetesResources(COMPUTE_CLASS).resource(changed).update();
      return "change-computeclass";
    }
    resource.delete();
    return "delete-computeclass";
  }

  /** A name for a pod's template: a ComputeClass's (which may not exist now). */
  String template() {
    return NAMES.get(random.nextInt(NAMES.size()));
  }

  /** The settled invariant (see the class comment). */
  void assertConverged() {
    Map<String, List<String>> expected = new TreeMap<>();
    for (GenericKubernetesResource cc :
        client.genericKubernetesResources(COMPUTE_CLASS).list().getItems()) {
      String name = cc.getMetadata().getName();
      if (!NAMES.contains(name)) {
        continue;
      }
      assertThat(cc.getMetadata().getDeletionTimestamp())
          .as("ComputeClass %s still being deleted", name)
          .isNull();
      expected.put(name, subrequests(cc));
      assertReady(cc);
    }
    // Other test classes on the same API server leave ComputeClasses of their own, and the bridge
    // rightly makes their templates here too: only the soak's and those of a deleted ComputeClass
    // (a leak) are judged.
    Map<String, List<String>> templates = new TreeMap<>();
    for (ResourceClaimTemplate t :
        client
            .resources(ResourceClaimTemplate.class)
            .inNamespace(namespace)
            .withLabel(MANAGED_BY, BRIDGE)
            .list()
            .getItems()) {
      String owner = t.getMetadata().getName();
      if (!NAMES.contains(owner)
          && client.genericKubernetesResources(COMPUTE_CLASS).withName(owner).get() != null) {
        continue;
      }
      var request = t.getSpec().getSpec().getDevices().getRequests();
      assertThat(request).as("requests of template %s", t.getMetadata().getName()).hasSize(1);
      assertThat(t.getMetadata().getLabels())
          .as("labels of template %s", t.getMetadata().getName())
          .containsEntry(NAME_LABEL, t.getMetadata().getName());
      templates.put(
          t.getMetadata().getName(),
          request.get(0).getFirstAvailable().stream()
              .map(s -> s.getName() + " of " + s.getDeviceClassName())
              .toList());
    }
    assertThat(templates)
        .as("the bridge's templates in %s, by ComputeClass", namespace)
        .isEqualTo(expected);

    Map<String, List<String>> usersOf = new TreeMap<>();
    for (DeviceClass c :
        client.resources(DeviceClass.class).withLabel(MANAGED_BY, BRIDGE).list().getItems()) {
      List<String> users =
          c.getMetadata().getLabels().keySet().stream()
              .filter(l -> l.startsWith(USED_BY))
              .map(l -> l.substring(USED_BY.length()))
              .sorted()
              .toList();
      assertThat(users).as("users of DeviceClass %s", c.getMetadata().getName()).isNotEmpty();
      // another class's ComputeClasses, if any were left, are not the soak's to judge
      List<String> ours = users.stream().filter(NAMES::contains).toList();
      if (!ours.isEmpty()) {
        usersOf.put(c.getMetadata().getName(), ours);
      }
    }
    Map<String, List<String>> expectedUsers = new TreeMap<>();
    expected.forEach(
        (cc, subrequests) ->
            subrequests.stream()
                .map(s -> s.substring(s.indexOf(" of ") + 4))
                .distinct()
                .forEach(dc -> expectedUsers.computeIfAbsent(dc, k -> new ArrayList<>()).add(cc)));
    expectedUsers.values().forEach(l -> l.sort(null));
    assertThat(usersOf)
        .as("the bridge's DeviceClasses and the ComputeClasses using each")
        .isEqualTo(expectedUsers);
  }

  /** Deletes every ComputeClass of the soak (the bridge's finalizer lets them go). */
  void deleteAll() {
    NAMES.forEach(n -> client.genericKubernetesResources(COMPUTE_CLASS).withName(n).delete());
  }

  /** Whether none of the soak's ComputeClasses is left. */
  boolean allGone() {
    return NAMES.stream()
        .allMatch(n -> client.genericKubernetesResources(COMPUTE_CLASS).withName(n).get() == null);
  }

  /** {@code <type>-x<count> of <type>.computeclass.kdra.io} per GPU priority, in order. */
  @SuppressWarnings("unchecked")
  private static List<String> subrequests(GenericKubernetesResource cc) {
    List<String> out = new ArrayList<>();
    Map<String, Object> spec = (Map<String, Object>) cc.getAdditionalProperties().get("spec");
    for (Object p : (List<Object>) spec.get("priorities")) {
      Map<String, Object> gpu = (Map<String, Object>) ((Map<String, Object>) p).get("gpu");
      if (gpu != null) {
        String type = (String) gpu.get("type");
        String entry = type + "-x" + gpu.get("count") + " of " + type + SUFFIX;
        if (!out.contains(entry)) {
          out.add(entry);
        }
      }
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static void assertReady(GenericKubernetesResource cc) {
    String name = cc.getMetadata().getName();
    Map<String, Object> status = (Map<String, Object>) cc.getAdditionalProperties().get("status");
    List<Map<String, Object>> conditions =
        status == null ? List.of() : (List<Map<String, Object>>) status.get("conditions");
    assertThat(conditions == null ? List.<Map<String, Object>>of() : conditions)
        .as("conditions of ComputeClass %s (generation %d)", name, cc.getMetadata().getGeneration())
        .anySatisfy(
            c -> {
              assertThat(c.get("type")).isEqualTo("Ready");
              assertThat(c.get("status")).isEqualTo("True");
              assertThat(((Number) c.get("observedGeneration")).longValue())
                  .isEqualTo(cc.getMetadata().getGeneration());
            });
  }

  private static GenericKubernetesResource computeClass(String name, String priorities) {
    String yaml =
        """
        apiVersion: cloud.google.com/v1
        kind: ComputeClass
        metadata:
          name: %s
          labels: {test: soak}
        spec:
          whenUnsatisfiable: DoNotScaleUp
          priorities:
        %s"""
            .formatted(name, priorities.indent(4));
    return Objects.requireNonNull(Serialization.unmarshal(yaml, GenericKubernetesResource.class));
  }
}
