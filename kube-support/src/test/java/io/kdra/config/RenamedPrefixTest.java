package io.kdra.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;

/** A property set under a service's old prefix still reaches it, with one WARN per key. */
class RenamedPrefixTest {

  private final List<String> warnings = new ArrayList<>();

  private SmallRyeConfig config(Map<String, String> properties) {
    return new SmallRyeConfigBuilder()
        .withSources(new PropertiesConfigSource(properties, "test", 100))
        .withDefaultValue("kdra.device-driver.backend", "simulated")
        .withInterceptors(new RenamedPrefix("driver", "kdra.device-driver", warnings::add))
        .build();
  }

  @Test
  void anOldNameAnswersForTheNewOneAndIsWarnedAboutOnce() {
    SmallRyeConfig config = config(Map.of("driver.node-name", "node-a"));

    assertThat(config.getOptionalValue("kdra.device-driver.node-name", String.class))
        .contains("node-a");
    assertThat(config.getOptionalValue("kdra.device-driver.node-name", String.class))
        .contains("node-a");

    assertThat(warnings)
        .containsExactly(
            "driver.node-name is deprecated and will stop working in the next release:"
                + " rename it kdra.device-driver.node-name");
  }

  @Test
  void anOldNameWinsOverTheNewNamesDefault() {
    SmallRyeConfig config = config(Map.of("driver.backend", "nvidia"));

    assertThat(config.getValue("kdra.device-driver.backend", String.class)).isEqualTo("nvidia");
    assertThat(warnings).hasSize(1);
  }

  @Test
  void theNewNameWinsOverTheOldOne() {
    SmallRyeConfig config =
        config(Map.of("driver.node-name", "old", "kdra.device-driver.node-name", "new"));

    assertThat(config.getValue("kdra.device-driver.node-name", String.class)).isEqualTo("new");
    assertThat(warnings).isEmpty();
  }

  @Test
  void oldNamesAreListedUnderTheNewPrefixSoMapKeysAreFound() {
    SmallRyeConfig config = config(Map.of("driver.network-pools.fabric-a.driver", "gpu.kdra.io"));

    assertThat(StreamSupport.stream(config.getPropertyNames().spliterator(), false))
        .contains("kdra.device-driver.network-pools.fabric-a.driver");
  }

  @Test
  void otherNamesAreLeftAlone() {
    SmallRyeConfig config = config(Map.of("driverless.x", "1", "quarkus.http.port", "8080"));

    assertThat(config.getOptionalValue("kdra.device-driverless.x", String.class)).isEmpty();
    assertThat(config.getOptionalValue("kdra.device-driver.x", String.class)).isEmpty();
    assertThat(config.getValue("quarkus.http.port", String.class)).isEqualTo("8080");
    assertThat(warnings).isEmpty();
  }
}
