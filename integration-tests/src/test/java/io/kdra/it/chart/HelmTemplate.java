package io.kdra.it.chart;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code helm template} with the Helm that helm-java embeds, in a JVM of its own. helm-java loads
 * Helm as a Go shared library (about 94 MB, extracted into {@code java.io.tmpdir}) whose Go runtime
 * takes SIGINT and SIGTERM from the JVM that loads it: that JVM then ignores Ctrl-C and {@code
 * kill}, runs no shutdown hook, and leaves its children and the extracted library behind (as {@code
 * bin/demo} did). So the harness never loads it itself; it runs this class as a short child
 * process, whose normal exit removes the library again.
 *
 * <p>Arguments: {@code <chart dir> <release> <namespace> <kube version> [key=value]...}; the
 * rendered manifests on stdout.
 */
public final class HelmTemplate {

  private static final long TIMEOUT_SECONDS = 120;

  private HelmTemplate() {}

  public static void main(String[] args) {
    TemplateCommand template =
        new Helm(Path.of(args[0]))
            .template()
            .withName(args[1])
            .withNamespace(args[2])
            .withKubeVersion(args[3]);
    for (int i = 4; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      template.set(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    System.out.print(template.call());
    System.out.flush();
  }

  /**
   * The command of a short child JVM on this JVM's classpath and temporary directory (where
   * helm-java extracts its library) running {@code main}'s main with {@code args}.
   */
  static List<String> childJvm(Class<?> main, String... args) {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                "-XX:TieredStopAtLevel=1",
                "-Xshare:auto",
                "-cp",
                System.getProperty("java.class.path"),
                main.getName()));
    command.addAll(List.of(args));
    return command;
  }

  /** Renders {@code chart} in a child JVM on this JVM's classpath and temporary directory. */
  public static String render(
      Path chart, String release, String namespace, String kubeVersion, List<String> values) {
    List<String> command =
        childJvm(HelmTemplate.class, chart.toString(), release, namespace, kubeVersion);
    command.addAll(values);
    try {
      Process process =
          new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      String yaml = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(
            "helm template of " + chart + " still runs after " + TIMEOUT_SECONDS + " s");
      }
      if (process.exitValue() != 0) {
        throw new IllegalStateException(
            "helm template of "
                + chart
                + " failed with exit status "
                + process.exitValue()
                + " (its error is above)");
      }
      return yaml;
    } catch (IOException e) {
      throw new UncheckedIOException("rendering " + chart, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
