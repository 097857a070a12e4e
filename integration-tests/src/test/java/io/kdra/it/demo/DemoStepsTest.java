package io.kdra.it.demo;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A wait of the demo outlasts an API server too loaded to answer one request in time. */
class DemoStepsTest {

  @Test
  void aRequestThatTimesOutIsNotYetNotTheEndOfTheDemo() {
    AtomicInteger polls = new AtomicInteger();
    new DemoSteps()
        .await(
            "the second poll",
            60_000,
            "logs",
            () -> {
              if (polls.incrementAndGet() == 1) {
                throw new KubernetesClientException(
                    "The timeout period of 10000ms has been exceeded");
              }
              return true;
            });
  }

  @Test
  void atItsDeadlineTheWaitNamesWhatItWaitedForAndTheLastError() {
    assertThatThrownBy(
            () ->
                new DemoSteps()
                    .await(
                        "the publisher",
                        300,
                        "see the logs",
                        () -> {
                          throw new KubernetesClientException("request timed out");
                        }))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("timed out waiting for the publisher")
        .hasMessageContaining("request timed out")
        .hasMessageContaining("see the logs");
  }
}
