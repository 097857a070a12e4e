package io.kdra.kubectl;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WhatIfRunTest {

  private static final String TWO_WORKERS_AND_A_BIG_CLAIM =
      """
      apiVersion: resource.k8s.io/v1
      kind: ResourceClaimTemplate
      metadata: {name: one-gpu}
      spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}
      ---
      apiVersion: v1
      kind: Pod
      metadata: {name: w1}
      spec:
        resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
        containers: [{name: c, image: x}]
      ---
      apiVersion: v1
      kind: Pod
      metadata: {name: w2}
      spec:
        resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
        containers: [{name: c, image: x}]
      ---
      apiVersion: resource.k8s.io/v1
      kind: ResourceClaim
      metadata: {name: alone}
      spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu-80gi}}]}}
      """;

  @Test
  void podsArePlacedInOrderEachTakingItsDevicesAndUnusedClaimsAreTriedAlone() {
    assertThat(
            WhatIfRun.run(
                Fixture.manifest(TWO_WORKERS_AND_A_BIG_CLAIM),
                "ml",
                Fixture.cluster(),
                Main.options()))
        .containsExactly(
            new WhatIfRun.Row(
                "pod/ml/w1",
                true,
                "node-a",
                "claim w1-gpu-what-if: gpu: gpu.example.com/node-a/gpu-0"),
            // the only other free device is tainted; node-b's is the trainer's
            new WhatIfRun.Row(
                "pod/ml/w2",
                false,
                null,
                "2/3 nodes are available: 1 node(s) "
                    + "were not ready. claim w2-gpu-what-if: request \"gpu\": 3 devices in class "
                    + "\"gpu\", 0 free (2 allocated to other claims, 1 tainted, e.g. "
                    + "gpu.example.com/unhealthy=ecc:NoSchedule, which the request does not "
                    + "tolerate)"),
            new WhatIfRun.Row(
                "resourceclaim/ml/alone",
                false,
                null,
                "no pod uses it (a claim "
                    + "is allocated when a pod that uses it is scheduled); alone, it would not "
                    + "fit: request \"gpu\": 0 devices in class \"gpu-80gi\", 0 free"));
  }

  @Test
  void aManifestsOwnClassAndNamespaceCount() {
    var rows =
        WhatIfRun.run(
            Fixture.manifest(
                """
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: gpu-80gi}
        spec: {selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: p, namespace: other}
        spec:
          resourceClaims: [{name: gpu, resourceClaimName: mine}]
          containers: [{name: c, image: x}]
        ---
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: mine, namespace: other}
        spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu-80gi}}]}}
        """),
            "ml",
            Fixture.cluster(),
            Main.options());
    assertThat(rows)
        .containsExactly(
            new WhatIfRun.Row(
                "pod/other/p", true, "node-a", "claim mine: gpu: gpu.example.com/node-a/gpu-0"));
  }
}
