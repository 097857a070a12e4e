package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.NamedRuleWithOperations;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Variable;
import java.util.List;
import java.util.Map;
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
        RenderTest.one(objects, ValidatingAdmissionPolicy.class, "kdra-opaque-config");
    assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");
    assertThat(policy.getSpec().getMatchConstraints().getResourceRules()).singleElement()
        .satisfies((NamedRuleWithOperations r) -> {
          assertThat(r.getApiGroups()).containsExactly("resource.k8s.io");
          assertThat(r.getApiVersions()).containsExactly("v1");
          assertThat(r.getOperations()).containsExactly("CREATE", "UPDATE");
          assertThat(r.getResources()).containsExactlyInAnyOrder("resourceclaims",
              "resourceclaimtemplates", "deviceclasses");
        });
    assertThat(drivers(policy)).isEqualTo("[\"gpu.kdra.io\",\"tpu.kdra.io\"]");
    assertThat(policy.getSpec().getValidations()).singleElement()
        .satisfies(v -> assertThat(v.getMessageExpression()).isNotBlank());

    ValidatingAdmissionPolicyBinding binding =
        RenderTest.one(objects, ValidatingAdmissionPolicyBinding.class, "kdra-opaque-config");
    assertThat(binding.getSpec().getPolicyName()).isEqualTo("kdra-opaque-config");
    assertThat(binding.getSpec().getValidationActions()).containsExactly("Deny");
    // every namespace and object: nothing to select, a claim cannot opt out
    assertThat(binding.getSpec().getMatchResources()).isNull();
  }

  @Test
  void theDriverNamesTheNameAndTheActionsComeFromTheValues() {
    List<HasMetadata> objects = Chart.render(Chart.fullValues());
    ValidatingAdmissionPolicy policy =
        RenderTest.one(objects, ValidatingAdmissionPolicy.class, "kdra-full-opaque-config");
    assertThat(drivers(policy)).isEqualTo("[\"gpu.example.org\",\"tpu.example.org\"]");
    assertThat(RenderTest.one(objects, ValidatingAdmissionPolicyBinding.class,
        "kdra-full-opaque-config").getSpec().getValidationActions())
        .containsExactly("Warn", "Audit");
  }

  @Test
  void turnedOffRendersNeither() {
    assertThat(Chart.render(Chart.values("admission.opaqueConfigPolicy.enabled", false)))
        .extracting(HasMetadata::getKind)
        .doesNotContain("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding");
  }

  private static String drivers(ValidatingAdmissionPolicy policy) {
    return policy.getSpec().getVariables().stream().filter(v -> v.getName().equals("drivers"))
        .map(Variable::getExpression).findFirst().orElseThrow();
  }
}
