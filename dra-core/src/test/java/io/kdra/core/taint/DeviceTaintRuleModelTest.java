package io.kdra.core.taint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import org.junit.jupiter.api.Test;

/** The project's copy of 1.37's v1 DeviceTaintRule, and the signal to drop it. */
class DeviceTaintRuleModelTest {

  /**
   * Fails once fabric8 models {@code resource.k8s.io/v1} DeviceTaintRule: then delete this
   * package's model classes and use fabric8's.
   */
  @Test
  void fabric8HasNoV1DeviceTaintRuleYet() {
    assertThatThrownBy(
            () -> Class.forName("io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintRule"))
        .isInstanceOf(ClassNotFoundException.class);
  }

  @Test
  void readsTheApiServersJson() throws Exception {
    String json =
        """
        {"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule",
         "metadata":{"name":"maintenance","generation":2},
         "spec":{"deviceSelector":{"driver":"gpu.example.com","pool":"node-a","device":"gpu-0"},
                 "taint":{"key":"maint","value":"yes","effect":"NoExecute",
                          "timeAdded":"2026-12-06T07:00:00Z"}},
         "status":{"conditions":[{"type":"EvictionInProgress","status":"True",
                   "reason":"PodsPendingEviction","message":"1 pod needs to be evicted in 1 namespace.",
                   "observedGeneration":2,"lastTransitionTime":"2026-12-06T07:00:01Z"}],
                   "someFutureField":1}}
        """;
    DeviceTaintRule rule = new ObjectMapper().readValue(json, DeviceTaintRule.class);

    assertThat(rule.name()).isEqualTo("maintenance");
    assertThat(rule.getSpec().getDeviceSelector().getPool()).isEqualTo("node-a");
    assertThat(rule.getSpec().getTaint().getTimeAdded()).isEqualTo("2026-12-06T07:00:00Z");
    assertThat(rule.getStatus().getConditions())
        .singleElement()
        .extracting("reason")
        .isEqualTo("PodsPendingEviction");
    assertThat(HasMetadata.getPlural(DeviceTaintRule.class)).isEqualTo("devicetaintrules");
    assertThat(HasMetadata.getApiVersion(DeviceTaintRule.class)).isEqualTo("resource.k8s.io/v1");
  }
}
