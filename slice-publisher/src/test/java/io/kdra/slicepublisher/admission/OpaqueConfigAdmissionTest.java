package io.kdra.slicepublisher.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class OpaqueConfigAdmissionTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final OpaqueConfigAdmission ADMISSION =
      new OpaqueConfigAdmission(new OpaqueConfigReview(Set.of("gpu.kdra.io", "tpu.kdra.io")));

  private static final String GOOD =
      "{'apiVersion': 'resource.kdra.io/v1alpha1', "
          + "'kind': 'GpuConfig', "
          + "'sharing': {'strategy': 'MPS', 'mps': {'activeThreadPercentage': 50}}}";

  /** The example: MPS settings under the default strategy, with a field MPS lacks. */
  private static final String BAD =
      "{'apiVersion': 'resource.kdra.io/v1alpha1', "
          + "'kind': 'GpuConfig', 'sharing': {'mps': {'threads': 4}}}";

  private static final String OTHER_DRIVERS =
      "{'driver': 'nic.example.com', " + "'parameters': {'sharing': {'mps': 4}}}";

  /** One request and what must come of it: allowed, or refused naming exactly these fields. */
  record Case(
      String name,
      String kind,
      String operation,
      String object,
      String oldObject,
      List<String> refusedFields) {
    Named<Case> named() {
      return Named.of(name, this);
    }
  }

  static Stream<Named<Case>> cases() {
    return Stream.of(
        allowed("a claim with a good config", "ResourceClaim", claim(ours(GOOD))),
        refused(
            "a claim with a bad config",
            "ResourceClaim",
            claim(ours(BAD)),
            "spec.devices.config[0].opaque.parameters.sharing.mps"),
        allowed(
            "another driver's config is not looked at",
            "ResourceClaim",
            claim("{'opaque': " + OTHER_DRIVERS + "}")),
        refused(
            "ours after another driver's, at its own index",
            "ResourceClaim",
            claim("{'opaque': " + OTHER_DRIVERS + "}, " + ours(BAD)),
            "spec.devices.config[1].opaque.parameters.sharing.mps"),
        refused(
            "the second driver name is ours too",
            "ResourceClaim",
            claim(ours(BAD).replace("gpu.kdra.io", "tpu.kdra.io")),
            "spec.devices.config[0].opaque.parameters.sharing.mps"),
        refused(
            "every bad config is named",
            "ResourceClaim",
            claim(
                ours(BAD)
                    + ", "
                    + ours(GOOD)
                    + ", "
                    + ours("{'apiVersion': 'resource.kdra.io/v2', 'kind': 'GpuConfig'}")),
            "spec.devices.config[0].opaque.parameters.sharing.mps",
            "spec.devices.config[2].opaque.parameters.apiVersion"),
        refused(
            "parameters null",
            "ResourceClaim",
            claim("{'opaque': {'driver': 'gpu.kdra.io', 'parameters': null}}"),
            "spec.devices.config[0].opaque.parameters"),
        allowed(
            "a claim without configs",
            "ResourceClaim",
            "{'spec': {'devices': {'requests': [{'name': 'gpu'}]}}}"),
        allowed("a template with a good config", "ResourceClaimTemplate", template(ours(GOOD))),
        refused(
            "a template with a bad config",
            "ResourceClaimTemplate",
            template(ours(BAD)),
            "spec.spec.devices.config[0].opaque.parameters.sharing.mps"),
        allowed("a class with a good config", "DeviceClass", deviceClass(ours(GOOD))),
        refused(
            "a class with a bad config",
            "DeviceClass",
            deviceClass(ours(BAD)),
            "spec.config[0].opaque.parameters.sharing.mps"),
        new Case(
                "a class whose config becomes bad",
                "DeviceClass",
                "UPDATE",
                deviceClass(ours(BAD)),
                deviceClass(ours(GOOD)),
                List.of("spec.config[0].opaque.parameters.sharing.mps"))
            .named(),
        new Case(
                "an update that leaves a bad spec alone (a finalizer) is allowed",
                "ResourceClaim",
                "UPDATE",
                claim(ours(BAD)),
                claim(ours(BAD)),
                List.of())
            .named(),
        new Case(
                "a delete is allowed", "ResourceClaim", "DELETE", null, claim(ours(BAD)), List.of())
            .named(),
        allowed(
            "another kind is allowed",
            "Pod",
            "{'spec': {'devices': {'config': [" + ours(BAD) + "]}}}"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void decidesAsTheDriverDecodes(Case c) throws Exception {
    OpaqueConfigAdmission.Decision decision = ADMISSION.decide(review(c));
    AdmissionResponse response = decision.response().getResponse();
    assertThat(decision.response().getApiVersion()).isEqualTo("admission.k8s.io/v1");
    assertThat(decision.response().getKind()).isEqualTo("AdmissionReview");
    assertThat(response.getUid()).isEqualTo("uid-1");
    assertThat(response.getAllowed()).isEqualTo(c.refusedFields().isEmpty());
    if (c.refusedFields().isEmpty()) {
      assertThat(response.getStatus()).isNull();
      return;
    }
    assertThat(response.getStatus().getCode()).isEqualTo(422);
    assertThat(response.getStatus().getReason()).isEqualTo("Invalid");
    assertThat(response.getStatus().getDetails().getCauses())
        .extracting(StatusCause::getField)
        .containsExactlyElementsOf(c.refusedFields());
    for (String field : c.refusedFields()) {
      assertThat(response.getStatus().getMessage()).contains(field + ": ");
    }
  }

  @Test
  void theMessageIsTheDecodersOwnWords() throws Exception {
    Case c = new Case("", "ResourceClaim", "CREATE", claim(ours(BAD)), null, List.of());
    assertThat(ADMISSION.decide(review(c)).response().getResponse().getStatus().getMessage())
        .isEqualTo(
            "spec.devices.config[0].opaque.parameters.sharing.mps: "
                + "not allowed with strategy Exclusive");
  }

  @Test
  void aLongMessageIsCutAsThePolicyCutsIt() throws Exception {
    String many =
        String.join(
            ", ",
            java.util.Collections.nCopies(
                32,
                ours(
                    "{'apiVersion': 'resource.kdra.io/v1alpha1', 'kind': 'GpuConfig', "
                        + "'sharing': {'strategy': 'MPS', 'mps': {'x"
                        + "y".repeat(200)
                        + "': 1}}}")));
    Case c = new Case("", "ResourceClaim", "CREATE", claim(many), null, List.of());
    AdmissionResponse response = ADMISSION.decide(review(c)).response().getResponse();
    assertThat(response.getStatus().getMessage())
        .hasSize(OpaqueConfigAdmission.MAX_MESSAGE + " ... (cut at 2000 characters)".length())
        .endsWith(" ... (cut at 2000 characters)");
    assertThat(response.getStatus().getDetails().getCauses()).hasSize(32);
  }

  @Test
  void aBodyWithoutARequestIsNoReview() {
    assertThatThrownBy(() -> ADMISSION.decide(JSON.readTree("{\"kind\": \"AdmissionReview\"}")))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static Named<Case> allowed(String name, String kind, String object) {
    return new Case(name, kind, "CREATE", object, null, List.of()).named();
  }

  private static Named<Case> refused(String name, String kind, String object, String... fields) {
    return new Case(name, kind, "CREATE", object, null, List.of(fields)).named();
  }

  private static String ours(String parameters) {
    return "{'requests': ['gpu'], 'opaque': {'driver': 'gpu.kdra.io', 'parameters': "
        + parameters
        + "}}";
  }

  private static String claim(String configs) {
    return "{'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaim', "
        + "'metadata': {'name': 'c', 'namespace': 'ns'}, "
        + "'spec': {'devices': {'requests': [{'name': 'gpu'}], 'config': ["
        + configs
        + "]}}}";
  }

  private static String template(String configs) {
    return "{'apiVersion': 'resource.k8s.io/v1', 'kind': 'ResourceClaimTemplate', "
        + "'spec': {'spec': {'devices': {'config': ["
        + configs
        + "]}}}}";
  }

  private static String deviceClass(String configs) {
    return "{'apiVersion': 'resource.k8s.io/v1', 'kind': 'DeviceClass', "
        + "'spec': {'config': ["
        + configs
        + "]}}";
  }

  private static JsonNode review(Case c) throws Exception {
    String json =
        "{'apiVersion': 'admission.k8s.io/v1', 'kind': 'AdmissionReview', "
            + "'request': {'uid': 'uid-1', 'kind': {'group': 'resource.k8s.io', 'version': 'v1', "
            + "'kind': '"
            + c.kind()
            + "'}, 'operation': '"
            + c.operation()
            + "', "
            + "'userInfo': {'username': 'alice'}, "
            + "'object': "
            + c.object()
            + ", 'oldObject': "
            + c.oldObject()
            + "}}";
    return JSON.readTree(json.replace('\'', '"'));
  }
}
