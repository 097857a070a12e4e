package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.NamedRuleWithOperations;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Variable;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * templates/admission/opaque-config-policy.yaml: what it matches, for which drivers, what a failed
 * check does. What it refuses is proven on a real API server (OpaqueConfigAdmissionIT).
 */
class AdmissionPolicyTest {

  @Test
  void onByDefaultRefusingWritesOfClaimsTemplatesAndClassesForBothDrivers() {
    List<HasMetadata> objects = Chart.render(Map.of());
    ValidatingAdmissionPolicy policy =
        Rendered.one(objects, ValidatingAdmissionPolicy.class, "kdra-opaque-config");
    assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");
    assertThat(policy.getSpec().getMatchConstraints().getResourceRules())
        .singleElement()
        .satisfies(
            (NamedRuleWithOperations r) -> {
              assertThat(r.getApiGroups()).containsExactly("resource.k8s.io");
              assertThat(r.getApiVersions()).containsExactly("v1");
              assertThat(r.getOperations()).containsExactly("CREATE", "UPDATE");
              assertThat(r.getResources())
                  .containsExactlyInAnyOrder(
                      "resourceclaims", "resourceclaimtemplates", "deviceclasses");
            });
    assertThat(drivers(policy)).isEqualTo("[\"gpu.kdra.io\",\"tpu.kdra.io\"]");
    assertThat(policy.getSpec().getValidations())
        .singleElement()
        .satisfies(v -> assertThat(v.getMessageExpression()).isNotBlank());

    ValidatingAdmissionPolicyBinding binding =
        Rendered.one(objects, ValidatingAdmissionPolicyBinding.class, "kdra-opaque-config");
    assertThat(binding.getSpec().getPolicyName()).isEqualTo("kdra-opaque-config");
    assertThat(binding.getSpec().getValidationActions()).containsExactly("Deny");
    // every namespace and object: nothing to select, a claim cannot opt out
    assertThat(binding.getSpec().getMatchResources()).isNull();
  }

  @Test
  void theDriverNamesTheNameAndTheActionsComeFromTheValues() {
    List<HasMetadata> objects = Chart.render(Chart.fullValues());
    ValidatingAdmissionPolicy policy =
        Rendered.one(objects, ValidatingAdmissionPolicy.class, "kdra-full-opaque-config");
    assertThat(drivers(policy)).isEqualTo("[\"gpu.example.org\",\"tpu.example.org\"]");
    assertThat(
            Rendered.one(objects, ValidatingAdmissionPolicyBinding.class, "kdra-full-opaque-config")
                .getSpec()
                .getValidationActions())
        .containsExactly("Warn", "Audit");
  }

  @Test
  void turnedOffRendersNeither() {
    // the writers' policies (WriterPolicyTest) are switched apart
    assertThat(Chart.render(Chart.values("admission.opaqueConfigPolicy.enabled", false)))
        .filteredOn(o -> o.getKind().startsWith("ValidatingAdmissionPolicy"))
        .extracting(o -> o.getMetadata().getName())
        .doesNotContain("kdra-opaque-config");
  }

  /**
   * A 1.34 API server (the oldest the chart supports) compiles a new policy with the CEL
   * environment of 1.33 and refuses functions added later: those of cel-go's lists extension (1.34)
   * and cel.bind (not in the admission environment at all). Tried with kube-apiserver 1.36 started
   * with --emulated-version=1.34: "undeclared reference to 'flatten'".
   */
  @Test
  void noCelFunctionTheOldestSupportedApiServerRefuses() {
    ValidatingAdmissionPolicy policy =
        Rendered.one(Chart.render(Map.of()), ValidatingAdmissionPolicy.class, "kdra-opaque-config");
    Stream<String> expressions =
        Stream.of(
                policy.getSpec().getVariables().stream().map(Variable::getExpression),
                policy.getSpec().getMatchConditions().stream().map(c -> c.getExpression()),
                policy.getSpec().getValidations().stream()
                    .flatMap(v -> Stream.of(v.getExpression(), v.getMessageExpression())))
            .flatMap(e -> e);
    Pattern newer =
        Pattern.compile(
            "\\.(slice|flatten|distinct|reverse|sort|sortBy|first|last)\\(|lists\\.range\\(|cel\\.bind\\(");
    assertThat(expressions).noneMatch(e -> newer.matcher(e).find());
  }

  private static String drivers(ValidatingAdmissionPolicy policy) {
    return policy.getSpec().getVariables().stream()
        .filter(v -> v.getName().equals("drivers"))
        .map(Variable::getExpression)
        .findFirst()
        .orElseThrow();
  }
}
