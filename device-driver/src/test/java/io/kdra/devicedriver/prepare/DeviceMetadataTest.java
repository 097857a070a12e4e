package io.kdra.devicedriver.prepare;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.model.AttributeValue;
import io.kdra.devicedriver.discovery.NodeDevice;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeviceMetadataTest {
  private static final NodeDevice GPU0 =
      NodeDevice.of(
          "gpu-0",
          Map.of(
              "productName", new AttributeValue.StringValue("NVIDIA L4 <24GB> & more"),
              "index", new AttributeValue.IntValue(0),
              "mig", new AttributeValue.BoolValue(false),
              "driverVersion",
                  new AttributeValue.VersionValue(io.kdra.core.model.Semver.parse("550.54.15")),
              "resource.kubernetes.io/pcieRoot", new AttributeValue.StringValue("pci0000:00")),
          Map.of());
  private static final NodeDevice GPU1 = NodeDevice.of("gpu-1", Map.of(), Map.of());

  /**
   * The bytes upstream's kubeletplugin helper (k8s.io/dynamic-resource-allocation v0.37.2) writes
   * for the same claim and devices: its scheme's pretty JSON encoder for metadata v1beta1. The
   * resource was generated with that code (api/metadata/install, EncoderForVersion).
   */
  @Test
  void aFileIsByteForByteWhatUpstreamsHelperWrites() throws IOException {
    List<DeviceMetadata.File> files =
        DeviceMetadata.files(
            "gpu.kdra.io",
            new DeviceMetadata.Claim("apps", "web-gpu-x1", "uid-c", "gpu"),
            List.of(
                new DeviceMetadata.Allocated("gpu/large", "node-a", GPU0),
                new DeviceMetadata.Allocated("gpu/large", "node-a", GPU1)));
    assertThat(files).hasSize(1);
    assertThat(files.get(0).content()).isEqualTo(resource("device-metadata/v1beta1-upstream.json"));
    assertThat(files.get(0).request()).isEqualTo("gpu");
    assertThat(files.get(0).hostPath())
        .isEqualTo("dra-device-metadata/apps_web-gpu-x1/gpu/metadata.json");
    // a template's claim: under its pod-claim name, where the pod's containers look
    assertThat(files.get(0).containerPath())
        .isEqualTo(
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpu/gpu/gpu.kdra.io-metadata.json");
  }

  @Test
  void oneFilePerRequestAndAClaimByNameIsUnderItsName() {
    List<DeviceMetadata.File> files =
        DeviceMetadata.files(
            "gpu.kdra.io",
            new DeviceMetadata.Claim("apps", "shared", "uid-s", null),
            List.of(
                new DeviceMetadata.Allocated("a", "node-a", GPU1),
                new DeviceMetadata.Allocated("b", "node-a", GPU0)));
    assertThat(files).extracting(DeviceMetadata.File::request).containsExactly("a", "b");
    assertThat(files.get(1).containerPath())
        .isEqualTo(
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/shared/b/gpu.kdra.io-metadata.json");
    assertThat(files.get(0).content()).doesNotContain("podClaimName").contains("\"name\": \"a\"");
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = DeviceMetadataTest.class.getClassLoader().getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
