package io.kdra.computeclassbridge.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The old prefix's interceptor is registered: an old name still reaches the service. */
class OldBridgePrefixTest {

  @Test
  void aPropertyUnderTheOldPrefixStillSetsTheNewOne() {
    SmallRyeConfig config =
        new SmallRyeConfigBuilder()
            .addDiscoveredInterceptors()
            .withSources(
                new PropertiesConfigSource(Map.of("bridge.request-name", "gpu"), "old", 100))
            .build();

    assertThat(config.getValue("kdra.computeclass-bridge.request-name", String.class))
        .isEqualTo("gpu");
  }
}
