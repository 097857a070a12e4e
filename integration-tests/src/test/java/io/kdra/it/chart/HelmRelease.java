package io.kdra.it.chart;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.InstallCommand;
import com.marcnuri.helm.Release;
import com.marcnuri.helm.UpgradeCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code helm install}, {@code helm upgrade} and {@code helm uninstall} of a chart with the Helm
 * that helm-java embeds, each in a JVM of its own (see {@link HelmTemplate} for why the harness
 * never loads Helm itself). Install and upgrade wait as {@code --wait} does, up to {@link
 * #WAIT_SECONDS}; {@code install-no-wait} returns once the objects are created, for a test that
 * waits for what it asserts with its own, shorter limits.
 *
 * <p>Arguments: {@code install|install-no-wait|upgrade|uninstall <chart dir> <release> <namespace>
 * <kubeconfig> [values file]...}; what Helm says on stdout.
 */
public final class HelmRelease {

  static final int WAIT_SECONDS = 420;

  private HelmRelease() {}

  public static void main(String[] args) {
    String verb = args[0];
    Path chart = Path.of(args[1]);
    String release = args[2];
    String namespace = args[3];
    Path kubeconfig = Path.of(args[4]);
    switch (verb) {
      case "install", "install-no-wait" -> {
        InstallCommand install =
            new Helm(chart)
                .install()
                .withName(release)
                .withNamespace(namespace)
                .createNamespace()
                .withKubeConfig(kubeconfig);
        if (verb.equals("install")) {
          install.waitReady().withTimeout(WAIT_SECONDS);
        }
        for (int i = 5; i < args.length; i++) {
          install.withValuesFile(Path.of(args[i]));
        }
        print(install.call());
      }
      case "upgrade" -> {
        UpgradeCommand upgrade =
            new Helm(chart)
                .upgrade()
                .withName(release)
                .withNamespace(namespace)
                .withKubeConfig(kubeconfig)
                .waitReady()
                .withTimeout(WAIT_SECONDS);
        for (int i = 5; i < args.length; i++) {
          upgrade.withValuesFile(Path.of(args[i]));
        }
        print(upgrade.call());
      }
      case "uninstall" ->
          System.out.println(
              Helm.uninstall(release).withNamespace(namespace).withKubeConfig(kubeconfig).call());
      default ->
          throw new IllegalArgumentException(
              "install, install-no-wait, upgrade or uninstall: " + verb);
    }
    System.out.flush();
  }

  private static void print(Release r) {
    System.out.printf(
        "release %s revision %s in %s: %s%n",
        r.getName(), r.getRevision(), r.getNamespace(), r.getStatus());
  }

  /** Runs {@code helm <verb>} in a child JVM; its output, or an exception with it. */
  public static String run(
      String verb,
      Path chart,
      String release,
      String namespace,
      Path kubeconfig,
      List<Path> valuesFiles) {
    List<String> command =
        HelmTemplate.childJvm(
            HelmRelease.class, verb, chart.toString(), release, namespace, kubeconfig.toString());
    valuesFiles.forEach(f -> command.add(f.toString()));
    long started = System.nanoTime();
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(process.getInputStream().readAllBytes());
      if (!process.waitFor(WAIT_SECONDS + 60L, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("helm " + verb + " of " + release + " still runs:\n" + out);
      }
      if (process.exitValue() != 0) {
        throw new IllegalStateException(
            "helm "
                + verb
                + " of "
                + release
                + " failed with exit status "
                + process.exitValue()
                + ":\n"
                + out);
      }
      System.out.printf(
          "[helm] %s %s in %d ms: %s%n",
          verb, release, (System.nanoTime() - started) / 1_000_000, out.strip());
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("helm " + verb + " of " + release, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
