package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBindingBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kdra.it.chart.KdraChart;
import io.kdra.it.controlplane.ControlPlane;
import io.kdra.it.services.Dra;
import io.kdra.it.services.KdraStack;
import io.kdra.it.services.Stack;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Bad input the API server refuses reaches the user in the API server's own words: a claim from a
 * template that the real kube-apiserver refuses (here a ValidatingAdmissionPolicy; its validation
 * or a ResourceQuota read alike) is a FailedResourceClaimCreation Event on the pod whose message
 * ends with the API server's message, unchanged, as upstream's claim controller reports it.
 */
@ExtendWith(ControlPlane.class)
class ClaimRefusedIT {

  @RegisterExtension static final KdraStack STACK = KdraStack.nodes();

  static final String POLICY = "claims-need-a-team";

  @Test
  void aClaimTheApiServerRefusesIsAnEventOnThePodWithTheApiServersMessage() {
    Stack stack = STACK.get();
    KubernetesClient client = stack.client;
    String ns = stack.namespace;
    client.resource(policy()).serverSideApply();
    client.resource(binding(ns)).serverSideApply();
    // the policy is in force once the API server refuses a claim as the controller will make it
    // (same generated-name prefix): what it says then is what the pod must show
    AtomicReference<String> refusal = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              ResourceClaim probe = Dra.claim(ns, "unused", KdraChart.GPU_CLASS, 1);
              probe.getMetadata().setName(null);
              probe.getMetadata().setGenerateName("refused-gpu-");
              try {
                ResourceClaim made = client.resource(probe).create();
                client.resource(made).delete();
                throw new AssertionError("the policy does not refuse claims yet");
              } catch (KubernetesClientException e) {
                // 422: a policy's default reason is Invalid, as for the API server's validation
                assertThat(e.getCode()).isEqualTo(422);
                assertThat(e.getStatus().getMessage()).contains("every claim needs a team label");
                refusal.set(e.getStatus().getMessage());
              }
            });

    client.resource(Dra.template(ns, "untagged", KdraChart.GPU_CLASS, 1)).create();
    client.resource(Dra.podWithTemplate(ns, "refused", "untagged")).create();
    // the API server names the claim it refused, with its generated suffix: the only difference
    String expected =
        generated("PodResourceClaim gpu: create ResourceClaim refused-gpu-: " + refusal.get());
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(client.v1().events().inNamespace(ns).list().getItems())
                    .filteredOn(e -> "refused".equals(e.getInvolvedObject().getName()))
                    .filteredOn(e -> "FailedResourceClaimCreation".equals(e.getReason()))
                    .extracting(e -> generated(e.getMessage()))
                    .contains(expected));
    assertThat(client.resources(ResourceClaim.class).inNamespace(ns).list().getItems()).isEmpty();
    client.resource(binding(ns)).delete();
    client.resource(policy()).delete();
  }

  /** The message with the API server's generated name suffix ({@code refused-gpu-x7k2p}) cut. */
  static String generated(String message) {
    return message.replaceAll("refused-gpu-[a-z0-9]{5}\"", "refused-gpu-*\"");
  }

  static ValidatingAdmissionPolicy policy() {
    return new ValidatingAdmissionPolicyBuilder()
        .withNewMetadata()
        .withName(POLICY)
        .endMetadata()
        .withNewSpec()
        .withFailurePolicy("Fail")
        .withNewMatchConstraints()
        .addNewResourceRule()
        .withApiGroups("resource.k8s.io")
        .withApiVersions("*")
        .withOperations("CREATE")
        .withResources("resourceclaims")
        .endResourceRule()
        .endMatchConstraints()
        .addNewValidation()
        .withExpression("has(object.metadata.labels) && 'team' in object.metadata.labels")
        .withMessage("every claim needs a team label")
        .endValidation()
        .endSpec()
        .build();
  }

  /** The policy for the test's namespace only. */
  static ValidatingAdmissionPolicyBinding binding(String namespace) {
    return new ValidatingAdmissionPolicyBindingBuilder()
        .withNewMetadata()
        .withName(POLICY)
        .endMetadata()
        .withNewSpec()
        .withPolicyName(POLICY)
        .withValidationActions("Deny")
        .withNewMatchResources()
        .withNewNamespaceSelector()
        .addToMatchLabels("kubernetes.io/metadata.name", namespace)
        .endNamespaceSelector()
        .endMatchResources()
        .endSpec()
        .build();
  }
}
