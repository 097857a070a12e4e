package io.kdra.slicepublisher.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The old prefix's interceptor is registered: an old name still reaches the service. */
class OldPublisherPrefixTest {

  @Test
  void aPropertyUnderTheOldPrefixStillSetsTheNewOne() {
    SmallRyeConfig config =
        new SmallRyeConfigBuilder()
            .addDiscoveredInterceptors()
            .withSources(
                new PropertiesConfigSource(Map.of("publisher.resync-period", "7s"), "old", 100))
            .build();

    assertThat(config.getValue("kdra.slice-publisher.resync-period", String.class)).isEqualTo("7s");
  }
}
