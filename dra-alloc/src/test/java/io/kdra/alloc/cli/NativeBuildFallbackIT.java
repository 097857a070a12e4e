package io.kdra.alloc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * native/build-native-image.sh when a build step fails past its prerequisite checks (here: the
 * image builder's jars cannot be fetched, as with a version no registry serves): under {@code
 * kdra.native=auto}, the Maven build's default, it says on one line what was skipped and why and
 * succeeds, so that {@code verify} does not depend on the native build; under {@code true} it
 * fails. It runs on a copy of the module's layout, so the executable the build made is left alone.
 */
class NativeBuildFallbackIT {

  private static final Path MODULE = Path.of("").toAbsolutePath();
  private static final Path ROOT = MODULE.getParent();
  private static final String MISSING_VERSION = "0.0.1-kdra-missing";

  @BeforeAll
  static void theMachineHasWhatTheBuildChecksFor() {
    // without these the script stops at its prerequisite checks, before any step that can fail
    Assumptions.assumeTrue(
        "Linux".equals(System.getProperty("os.name"))
            && "amd64".equals(System.getProperty("os.arch")),
        "the native build is for Linux on x86-64");
    Assumptions.assumeTrue(onPath("gcc"), "gcc is not installed");
    Assumptions.assumeTrue(Files.exists(Path.of("/usr/include/zlib.h")), "no zlib headers");
    Assumptions.assumeTrue(jdk25WithJvmci(), "no JDK 25 with JVMCI");
  }

  @Test
  void underAutoAFailedStepIsASkipNamedOnOneLine(@TempDir Path copy) throws Exception {
    Result result = run(layout(copy), "auto");

    assertThat(result.exit()).as(result.err()).isZero();
    assertThat(result.err().lines())
        .as(result.err())
        .contains(
            "build-native-image: no native executable: fetching the image builder "
                + MISSING_VERSION
                + " failed (exit 1; the lines above say why; kdra.native=auto, -Dkdra.native=true"
                + " makes this an error)");
    assertThat(copy.resolve("dra-alloc/target/native")).doesNotExist();
  }

  @Test
  void whenTheExecutableIsRequiredAFailedStepFailsTheBuild(@TempDir Path copy) throws Exception {
    Result result = run(layout(copy), "true");

    assertThat(result.exit()).as(result.err()).isNotZero();
    assertThat(result.err())
        .contains("build-native-image: fetching the image builder " + MISSING_VERSION + " failed");
    assertThat(copy.resolve("dra-alloc/target/native")).doesNotExist();
  }

  /**
   * The script, the Maven wrapper and the jar, linked into {@code copy} as the checkout has them.
   */
  private static Path layout(Path copy) throws IOException {
    Files.createDirectories(copy.resolve("dra-alloc/target"));
    Files.createSymbolicLink(copy.resolve("dra-alloc/native"), MODULE.resolve("native"));
    for (String shared : List.of("mvnw", ".mvn", "pom.xml")) {
      Files.createSymbolicLink(copy.resolve(shared), ROOT.resolve(shared));
    }
    Path jar = MODULE.resolve("target/dra-alloc.jar");
    Assumptions.assumeTrue(Files.exists(jar), "the jar is built in the package phase");
    Files.createSymbolicLink(copy.resolve("dra-alloc/target/dra-alloc.jar"), jar);
    return copy;
  }

  private record Result(int exit, String err) {}

  private static Result run(Path copy, String mode) throws IOException, InterruptedException {
    File err = copy.resolve("err.txt").toFile();
    ProcessBuilder builder =
        new ProcessBuilder(
                "bash",
                copy.resolve("dra-alloc/native/build-native-image.sh").toString(),
                "--mode=" + mode,
                "--skip-its=false")
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(err)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    builder.environment().put("GRAALVM_VERSION", MISSING_VERSION);
    Process process = builder.start();
    if (!process.waitFor(5, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new IllegalStateException("build-native-image.sh did not finish in 5 minutes");
    }
    return new Result(process.exitValue(), Files.readString(err.toPath()));
  }

  private static boolean onPath(String command) {
    return Stream.of(System.getenv("PATH").split(File.pathSeparator))
        .anyMatch(dir -> Files.isExecutable(Path.of(dir, command)));
  }

  /** As the script's find_jdk: a JDK 25 under /usr/lib/jvm (or NATIVE_JAVA_HOME) with JVMCI. */
  private static boolean jdk25WithJvmci() {
    try (Stream<Path> homes = Files.list(Path.of("/usr/lib/jvm"))) {
      Stream<Path> candidates =
          System.getenv("NATIVE_JAVA_HOME") == null
              ? homes
              : Stream.concat(Stream.of(Path.of(System.getenv("NATIVE_JAVA_HOME"))), homes);
      return candidates.anyMatch(NativeBuildFallbackIT::isJdk25WithJvmci);
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean isJdk25WithJvmci(Path home) {
    try {
      Path release = home.resolve("release");
      if (!Files.isExecutable(home.resolve("bin/java"))
          || !Files.exists(release)
          || !Files.readString(release).contains("JAVA_VERSION=\"25")) {
        return false;
      }
      Process modules =
          new ProcessBuilder(home.resolve("bin/java").toString(), "--list-modules")
              .redirectErrorStream(true)
              .start();
      String listed = new String(modules.getInputStream().readAllBytes());
      return modules.waitFor() == 0 && listed.contains("jdk.internal.vm.ci@");
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
