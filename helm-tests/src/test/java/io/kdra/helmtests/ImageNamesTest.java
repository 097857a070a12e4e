package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The images the chart pulls by default are the ones the build makes: {@code kdra/<component>}
 * tagged with the root pom's {@code kdra.image.tag} (src/main/docker/build-image.sh), so that a
 * release bumps the chart's appVersion and the images' tag together.
 */
class ImageNamesTest {

  @Test
  void theChartPullsTheImagesTheBuildTags() {
    String tag = System.getProperty("kdra.image.tag");
    assertThat(tag).as("kdra.image.tag from the root pom").isNotBlank();
    Map<String, String> images = new TreeMap<>();
    for (HasMetadata o :
        Chart.render(
            Map.of(
                "computeClassBridge", Map.of("enabled", true, "installComputeClassCRD", true)))) {
      PodSpec spec =
          o instanceof Deployment d
              ? d.getSpec().getTemplate().getSpec()
              : o instanceof DaemonSet ds ? ds.getSpec().getTemplate().getSpec() : null;
      if (spec != null) {
        images.put(
            o.getMetadata().getLabels().get("app.kubernetes.io/component"),
            spec.getContainers().get(0).getImage());
      }
    }
    assertThat(images)
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "device-driver", "kdra/device-driver:" + tag,
                "slice-publisher", "kdra/slice-publisher:" + tag,
                "claim-controller", "kdra/claim-controller:" + tag,
                "computeclass-bridge", "kdra/computeclass-bridge:" + tag));
  }
}
