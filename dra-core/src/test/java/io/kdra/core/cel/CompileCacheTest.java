package io.kdra.core.cel;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The compile cache loads each expression once, also when several threads ask at once. */
class CompileCacheTest {

  private static final int THREADS = 4;
  private static final int EXPRESSIONS = 40;

  @Test
  void threadsAskingForOneExpressionAtOnceShareOneCompiledProgram() throws Exception {
    DeviceSelectorEnvironment env = DeviceSelectorEnvironment.create();
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      for (int i = 0; i < EXPRESSIONS; i++) {
        String expression = "device.driver == 'gpu-" + i + ".kdra.io' && 1 + " + i + " > 0";
        CyclicBarrier together = new CyclicBarrier(THREADS);
        List<Future<CompiledSelector>> answers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
          answers.add(
              pool.submit(
                  () -> {
                    together.await();
                    return env.compile(expression);
                  }));
        }
        CompiledSelector first = answers.get(0).get();
        for (Future<CompiledSelector> answer : answers) {
          assertThat(answer.get()).as(expression).isSameAs(first);
        }
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(env.cachedPrograms()).isEqualTo(EXPRESSIONS);
  }

  @Test
  void aCompileErrorIsNotCached() {
    DeviceSelectorEnvironment env = DeviceSelectorEnvironment.create();
    for (int i = 0; i < 2; i++) {
      try {
        env.compile("device.vendor == 'x'");
      } catch (CelSelectorException expected) {
        // as upstream: an invalid expression is an error every time it is asked for
      }
    }
    assertThat(env.cachedPrograms()).isZero();
  }
}
