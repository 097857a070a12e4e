package io.kdra.devicedriver.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The old prefix's interceptor is registered: an old name still reaches the service. */
class OldDriverPrefixTest {

  @Test
  void aPropertyUnderTheOldPrefixStillSetsTheNewOne() {
    SmallRyeConfig config =
        new SmallRyeConfigBuilder()
            .addDiscoveredInterceptors()
            .withSources(
                new PropertiesConfigSource(Map.of("driver.discovery-interval", "3s"), "old", 100))
            .build();

    assertThat(config.getValue("kdra.device-driver.discovery-interval", String.class))
        .isEqualTo("3s");
  }
}
