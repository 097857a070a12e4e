package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.NamedRuleWithOperations;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Variable;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * templates/admission/writers-policy.yaml: the slice-publisher's ServiceAccount may write only
 * ResourceSlices of its drivers, the computeclass-bridge's only DeviceClasses and
 * ResourceClaimTemplates labelled as its own. The policies' CEL is compiled and run on requests
 * ({@link PolicyCel}); that the API server enforces them is an integration test's to show.
 */
class WriterPolicyTest {

  static final String PUBLISHER = "system:serviceaccount:kdra-system:kdra-slice-publisher";
  static final String BRIDGE = "system:serviceaccount:kdra-system:kdra-computeclass-bridge";
  static final String MANAGED_BY = "app.kubernetes.io/managed-by";

  /** The label the bridge puts on what it generates (its templates in computeclass-bridge). */
  static final String BRIDGE_LABEL_VALUE = "kdra-computeclass-bridge";

  private static List<HasMetadata> objects;

  /** All components on (rendered once: the parameterized cases share it). */
  static synchronized List<HasMetadata> objects() {
    if (objects == null) {
      objects = Chart.render(Chart.values("computeClassBridge.enabled", true, "cluster.gke", true));
    }
    return objects;
  }

  static ValidatingAdmissionPolicy slicePolicy() {
    return Rendered.one(objects(), ValidatingAdmissionPolicy.class, "kdra-slice-writer");
  }

  static ValidatingAdmissionPolicy bridgePolicy() {
    return Rendered.one(objects(), ValidatingAdmissionPolicy.class, "kdra-computeclass-writer");
  }

  @Test
  void onByDefaultForTheSlicePublishersSlicesAndTheBridgesClassesAndTemplates() {
    List<HasMetadata> objects = objects();
    ValidatingAdmissionPolicy slices =
        Rendered.one(objects, ValidatingAdmissionPolicy.class, "kdra-slice-writer");
    assertThat(slices.getSpec().getFailurePolicy()).isEqualTo("Fail");
    assertThat(slices.getSpec().getMatchConstraints().getResourceRules())
        .singleElement()
        .satisfies(
            (NamedRuleWithOperations r) -> {
              assertThat(r.getApiGroups()).containsExactly("resource.k8s.io");
              assertThat(r.getOperations()).containsExactly("CREATE", "UPDATE", "DELETE");
              assertThat(r.getResources()).containsExactly("resourceslices");
            });
    assertThat(slices.getSpec().getMatchConditions())
        .singleElement()
        .satisfies(c -> assertThat(c.getExpression()).contains("'" + PUBLISHER + "'"));
    assertThat(variable(slices, "drivers")).isEqualTo("[\"gpu.kdra.io\",\"tpu.kdra.io\"]");

    ValidatingAdmissionPolicy bridge =
        Rendered.one(objects, ValidatingAdmissionPolicy.class, "kdra-computeclass-writer");
    assertThat(bridge.getSpec().getFailurePolicy()).isEqualTo("Fail");
    assertThat(bridge.getSpec().getMatchConstraints().getResourceRules())
        .singleElement()
        .satisfies(
            (NamedRuleWithOperations r) -> {
              assertThat(r.getOperations()).containsExactly("CREATE", "UPDATE", "DELETE");
              assertThat(r.getResources())
                  .containsExactlyInAnyOrder("deviceclasses", "resourceclaimtemplates");
            });
    assertThat(bridge.getSpec().getMatchConditions())
        .singleElement()
        .satisfies(c -> assertThat(c.getExpression()).contains("'" + BRIDGE + "'"));

    for (String name : List.of("kdra-slice-writer", "kdra-computeclass-writer")) {
      ValidatingAdmissionPolicyBinding binding =
          Rendered.one(objects, ValidatingAdmissionPolicyBinding.class, name);
      assertThat(binding.getSpec().getPolicyName()).isEqualTo(name);
      assertThat(binding.getSpec().getValidationActions()).containsExactly("Deny");
      assertThat(binding.getSpec().getMatchResources()).isNull();
    }
  }

  static Stream<Arguments> sliceWrites() {
    return Stream.of(
        Arguments.of("CREATE", PUBLISHER, "gpu.kdra.io", true),
        Arguments.of("UPDATE", PUBLISHER, "tpu.kdra.io", true),
        Arguments.of("DELETE", PUBLISHER, "gpu.kdra.io", true),
        Arguments.of("CREATE", PUBLISHER, "gpu.nvidia.com", false),
        Arguments.of("UPDATE", PUBLISHER, "gpu.nvidia.com", false),
        Arguments.of("DELETE", PUBLISHER, "gpu.nvidia.com", false),
        // anyone else's writes are not this policy's business
        Arguments.of(
            "CREATE", "system:serviceaccount:gpu-operator:nvidia-dra", "gpu.nvidia.com", true),
        Arguments.of("DELETE", "kubernetes-admin", "gpu.kdra.io", true));
  }

  @ParameterizedTest(name = "{0} of a {2} slice by {1}: admitted {3}")
  @MethodSource("sliceWrites")
  void thePublisherWritesOnlyItsDriversSlices(
      String operation, String user, String driver, boolean admitted) {
    Map<String, Object> slice =
        Map.of(
            "metadata", Map.of("name", "node-a-" + driver),
            "spec", Map.of("driver", driver, "nodeName", "node-a"));
    Optional<String> refusal =
        PolicyCel.refusal(
            slicePolicy(),
            request(operation, user, "ResourceSlice"),
            operation.equals("DELETE") ? null : slice,
            operation.equals("CREATE") ? null : slice);
    if (admitted) {
      assertThat(refusal).isEmpty();
    } else {
      assertThat(refusal)
          .hasValueSatisfying(
              m -> assertThat(m).contains("gpu.kdra.io, tpu.kdra.io").contains("not of " + driver));
    }
  }

  static Stream<Arguments> bridgeWrites() {
    return Stream.of(
        Arguments.of(
            "CREATE its own class", "CREATE", "DeviceClass", BRIDGE_LABEL_VALUE, null, true),
        Arguments.of(
            "UPDATE its own template",
            "UPDATE",
            "ResourceClaimTemplate",
            BRIDGE_LABEL_VALUE,
            BRIDGE_LABEL_VALUE,
            true),
        Arguments.of(
            "DELETE its own class", "DELETE", "DeviceClass", null, BRIDGE_LABEL_VALUE, true),
        Arguments.of("CREATE an unlabelled class", "CREATE", "DeviceClass", "", null, false),
        Arguments.of("CREATE a Helm-managed class", "CREATE", "DeviceClass", "Helm", null, false),
        Arguments.of(
            "adopt a hand-made template by labelling it",
            "UPDATE",
            "ResourceClaimTemplate",
            BRIDGE_LABEL_VALUE,
            "",
            false),
        Arguments.of(
            "take the label off its own class",
            "UPDATE",
            "DeviceClass",
            "",
            BRIDGE_LABEL_VALUE,
            false),
        Arguments.of("DELETE the chart's class", "DELETE", "DeviceClass", null, "Helm", false));
  }

  /** Labels: null no object (CREATE has no old one, DELETE no new one), "" no label. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("bridgeWrites")
  void theBridgeWritesOnlyWhatIsLabelledAsItsOwn(
      String what,
      String operation,
      String kind,
      String newLabel,
      String oldLabel,
      boolean admitted) {
    Optional<String> refusal =
        PolicyCel.refusal(
            bridgePolicy(),
            request(operation, BRIDGE, kind),
            labelled(newLabel),
            labelled(oldLabel));
    if (admitted) {
      assertThat(refusal).isEmpty();
    } else {
      assertThat(refusal)
          .hasValueSatisfying(
              m -> assertThat(m).contains(kind).contains(MANAGED_BY + "=" + BRIDGE_LABEL_VALUE));
    }
    // nobody else is held to the label
    assertThat(
            PolicyCel.refusal(
                bridgePolicy(),
                request(operation, "kubernetes-admin", kind),
                labelled(newLabel),
                labelled(oldLabel)))
        .isEmpty();
  }

  @Test
  void theLabelIsTheOneTheBridgePutsOnWhatItGenerates() throws IOException {
    for (String template : List.of("deviceclass.yaml", "resourceclaimtemplate.yaml")) {
      String text =
          Files.readString(
              Chart.DIR.resolve(
                  "../../computeclass-bridge/src/main/resources/templates/" + template));
      assertThat(text).contains(MANAGED_BY + ": " + BRIDGE_LABEL_VALUE);
    }
    assertThat(variable(bridgePolicy(), "foreign"))
        .contains(MANAGED_BY)
        .contains(BRIDGE_LABEL_VALUE);
  }

  @Test
  void theDriversAndTheActionsComeFromTheValues() {
    List<HasMetadata> objects = Chart.render(Chart.fullValues());
    ValidatingAdmissionPolicy slices =
        Rendered.one(objects, ValidatingAdmissionPolicy.class, "kdra-full-slice-writer");
    // full-values.yaml names the publisher's drivers itself
    assertThat(variable(slices, "drivers"))
        .isEqualTo("[\"gpu.example.org\",\"tpu.example.org\",\"nic.example.org\"]");
    assertThat(
            Rendered.one(objects, ValidatingAdmissionPolicyBinding.class, "kdra-full-slice-writer")
                .getSpec()
                .getValidationActions())
        .containsExactly("Warn", "Audit");
  }

  @Test
  void noBridgePolicyWithoutTheBridgeAndNeitherWhenTurnedOff() {
    assertThat(Chart.render(Map.of()))
        .filteredOn(o -> o.getKind().startsWith("ValidatingAdmissionPolicy"))
        .extracting(o -> o.getMetadata().getName())
        .doesNotContain("kdra-computeclass-writer")
        .contains("kdra-slice-writer");
    assertThat(
            Chart.render(
                Chart.values(
                    "admission.writersPolicy.enabled",
                    false,
                    "computeClassBridge.enabled",
                    true,
                    "cluster.gke",
                    true)))
        .filteredOn(o -> o.getKind().startsWith("ValidatingAdmissionPolicy"))
        .extracting(o -> o.getMetadata().getName())
        .doesNotContain("kdra-slice-writer", "kdra-computeclass-writer");
  }

  /**
   * Every expression compiles, and uses nothing a 1.34 API server (the oldest the chart supports)
   * refuses: see AdmissionPolicyTest for the functions it lacks.
   */
  @Test
  void everyExpressionCompilesWithWhatTheOldestSupportedApiServerHas() {
    Pattern newer =
        Pattern.compile(
            "\\.(slice|flatten|distinct|reverse|sort|sortBy|first|last)\\(|lists\\.range\\(|cel\\.bind\\(");
    for (ValidatingAdmissionPolicy policy : List.of(slicePolicy(), bridgePolicy())) {
      List<String> expressions =
          Stream.of(
                  policy.getSpec().getVariables().stream().map(Variable::getExpression),
                  policy.getSpec().getMatchConditions().stream().map(c -> c.getExpression()),
                  policy.getSpec().getValidations().stream()
                      .flatMap(v -> Stream.of(v.getExpression(), v.getMessageExpression())))
              .flatMap(e -> e)
              .toList();
      assertThat(expressions).isNotEmpty().noneMatch(e -> newer.matcher(e).find());
      expressions.forEach(PolicyCel::compile);
    }
  }

  private static Map<String, Object> request(String operation, String user, String kind) {
    return Map.of(
        "operation",
        operation,
        "userInfo",
        Map.of("username", user),
        "kind",
        Map.of("group", "resource.k8s.io", "version", "v1", "kind", kind));
  }

  /** An object with this managed-by label; "" without labels, null no object at all. */
  private static Map<String, Object> labelled(String managedBy) {
    if (managedBy == null) {
      return null;
    }
    Map<String, Object> metadata =
        managedBy.isEmpty()
            ? Map.of("name", "a100")
            : Map.of("name", "a100", "labels", Map.of(MANAGED_BY, managedBy));
    return Map.of("metadata", metadata, "spec", Map.of());
  }

  private static String variable(ValidatingAdmissionPolicy policy, String name) {
    return policy.getSpec().getVariables().stream()
        .filter(v -> v.getName().equals(name))
        .map(Variable::getExpression)
        .findFirst()
        .orElseThrow();
  }
}
