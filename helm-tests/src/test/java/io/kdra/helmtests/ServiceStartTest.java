package io.kdra.helmtests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each service starts on the properties the chart renders from full-values.yaml, read as the image
 * reads them (config/application.properties in the working directory): no property is refused,
 * unknown, or a build-time property the running service would ignore. Needs the services' jars (the
 * reactor builds them before this module); skipped when they are missing. The API server address
 * points nowhere: only the configuration phase matters here.
 */
class ServiceStartTest {

  static Stream<Arguments> services() {
    return Stream.of(
        Arguments.of("device-driver"),
        Arguments.of("slice-publisher"),
        Arguments.of("claim-controller"),
        Arguments.of("computeclass-bridge"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("services")
  void startsOnTheRenderedProperties(String service, @TempDir Path work)
      throws IOException, InterruptedException {
    Path jar =
        Path.of("..", service, "target", "quarkus-app", "quarkus-run.jar")
            .toAbsolutePath()
            .normalize();
    assumeTrue(Files.exists(jar), service + " is not built");
    List<HasMetadata> objects = Chart.render(Chart.fullValues());
    String properties =
        Rendered.one(objects, ConfigMap.class, "kdra-full-" + service)
            .getData()
            .get("application.properties");
    Files.createDirectories(work.resolve("config"));
    Files.writeString(work.resolve("config/application.properties"), properties);

    ProcessBuilder pb =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dquarkus.http.port=0",
                "-Dquarkus.http.ssl-port=0",
                "-jar",
                jar.toString())
            .directory(work.toFile())
            .redirectErrorStream(true);
    pb.environment().put("KUBERNETES_MASTER", "https://127.0.0.1:9");
    pb.environment().put("NODE_NAME", "node-a");
    pb.environment().put("QUARKUS_LOG_CATEGORY__IO_QUARKUS__LEVEL", "INFO");
    pb.environment().put("QUARKUS_LOG_CATEGORY__IO_QUARKIVERSE__LEVEL", "INFO");
    // the device-driver's host paths, kept in the temporary directory (env outranks the file)
    for (String dir : List.of("KUBELET_REGISTRY_DIR", "KUBELET_PLUGINS_DIR", "CDI_DIR")) {
      pb.environment().put("DRIVER_" + dir, work.resolve(dir.toLowerCase()).toString());
    }
    pb.environment()
        .put("KDRA_DEVICE_DRIVER_CHECKPOINT_FILE", work.resolve("checkpoint.json").toString());
    pb.environment().put("KDRA_DEVICE_DRIVER_BACKEND", "simulated");
    // the publisher's certificate, where the chart mounts its Secret, here in the directory
    Secret tls = Rendered.one(objects, Secret.class, "kdra-full-slice-publisher-tls");
    for (String file : List.of("tls.crt", "tls.key")) {
      Files.write(work.resolve(file), Base64.getDecoder().decode(tls.getData().get(file)));
    }
    for (String key :
        List.of(
            "KDRA_SLICE_PUBLISHER_INVENTORY_TLS_CERTIFICATE",
            "QUARKUS_HTTP_SSL_CERTIFICATE_FILES")) {
      pb.environment().put(key, work.resolve("tls.crt").toString());
    }
    for (String key :
        List.of(
            "KDRA_SLICE_PUBLISHER_INVENTORY_TLS_KEY", "QUARKUS_HTTP_SSL_CERTIFICATE_KEY_FILES")) {
      pb.environment().put(key, work.resolve("tls.key").toString());
    }

    Process p = pb.start();
    List<String> lines = new ArrayList<>();
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      String line;
      while (System.nanoTime() < deadline && (line = r.readLine()) != null) {
        lines.add(line);
        if (line.contains("started in")
            || line.contains("Starting operator")
            || line.contains("Failed to start")) {
          break;
        }
      }
    } finally {
      p.destroy();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
    String log = String.join("\n", lines);
    assertThat(log)
        .as("%s log", service)
        .containsAnyOf("started in", "Starting operator")
        .doesNotContain(
            "ConfigValidationException",
            "Unrecognized configuration key",
            "Configuration validation failed");
    // KUBERNETES_MASTER is this test's, not the chart's
    assertThat(lines)
        .as("build-time properties the chart must not set")
        .noneMatch(l -> l.startsWith(" - quarkus.") && !l.contains("kubernetes-client"));
  }
}
