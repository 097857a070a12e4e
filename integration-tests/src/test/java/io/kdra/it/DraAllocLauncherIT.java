package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.it.upstream.UpstreamAlloc;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/dra-alloc}, the launcher users run, on a copy of the built jar: it prints what the
 * entry point prints in process, writes its class-data archive on the first run, and the next run
 * maps it ({@code -Xshare:on} makes a JVM that cannot map it fail) with the command's own classes
 * and its libraries' in it (docs/dev/benchmarks.md). With a native executable built from the jar,
 * it runs that instead, unless DRA_ALLOC_JVM is set.
 */
class DraAllocLauncherIT {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  void printsWhatTheEntryPointPrintsAndReusesItsArchive(@TempDir Path copy) throws Exception {
    List<String> args = layout(copy);
    UpstreamAlloc.Result inProcess = UpstreamAlloc.kdra(args);
    assertThat(inProcess.out()).isNotBlank();

    UpstreamAlloc.Result first = launch(copy, args, "");

    assertThat(first.exit()).isEqualTo(inProcess.exit());
    assertThat(first.out()).isEqualTo(inProcess.out());
    assertThat(archives(copy)).as("the class-data archive the first run writes").hasSize(1);

    Path classLog = copy.resolve("classes.log");
    UpstreamAlloc.Result second =
        launch(copy, args, "-Xshare:on -Xlog:class+load=info:file=" + classLog);

    assertThat(second.exit()).as(second.err()).isEqualTo(inProcess.exit());
    assertThat(second.out()).isEqualTo(inProcess.out());
    List<String> loaded = Files.readAllLines(classLog);
    for (String shared :
        List.of(
            "io.kdra.alloc.cli.Main",
            "org.apache.commons.cli.DefaultParser",
            "com.fasterxml.jackson.databind.ObjectMapper")) {
      assertThat(loaded)
          .as(shared)
          .anySatisfy(line -> assertThat(line).contains(shared + " source: shared objects file"));
    }
  }

  @Test
  void runsTheNativeExecutableBuiltFromTheJarUnlessToldToUseTheJvm(@TempDir Path copy)
      throws Exception {
    Path built = ROOT.resolve("dra-alloc/target/native");
    Assumptions.assumeTrue(
        Files.isExecutable(built.resolve("dra-alloc")),
        "no native executable was built (-Dkdra.native, root pom)");
    List<String> args = layout(copy);
    Path nativeDir = copy.resolve("dra-alloc/target/native");
    try (Stream<Path> files = Files.walk(built)) {
      for (Path file : files.toList()) {
        Files.copy(file, nativeDir.resolve(built.relativize(file).toString()));
      }
    }
    Path executable = nativeDir.resolve("dra-alloc");
    executable.toFile().setExecutable(true);
    // newer than the jar, as a build leaves it
    Files.setLastModifiedTime(
        executable,
        FileTime.fromMillis(
            Files.getLastModifiedTime(copy.resolve("dra-alloc/target/dra-alloc.jar")).toMillis()
                + 1000));
    UpstreamAlloc.Result inProcess = UpstreamAlloc.kdra(args);

    UpstreamAlloc.Result viaNative = launch(copy, args, "");

    assertThat(viaNative.exit()).as(viaNative.err()).isEqualTo(inProcess.exit());
    assertThat(viaNative.out()).isEqualTo(inProcess.out());
    assertThat(archives(copy)).as("no JVM ran, so no class-data archive").isEmpty();

    UpstreamAlloc.Result viaJvm = launch(copy, args, "", Map.of("DRA_ALLOC_JVM", "1"));

    assertThat(viaJvm.out()).isEqualTo(inProcess.out());
    assertThat(archives(copy)).as("DRA_ALLOC_JVM ran the jar").hasSize(1);
  }

  /** bin/dra-alloc and the jar copied into {@code copy}; the arguments of one example. */
  private static List<String> layout(Path copy) throws IOException {
    Files.createDirectories(copy.resolve("bin"));
    Files.createDirectories(copy.resolve("dra-alloc/target"));
    Files.copy(ROOT.resolve("bin/dra-alloc"), copy.resolve("bin/dra-alloc"));
    copy.resolve("bin/dra-alloc").toFile().setExecutable(true);
    Files.copy(
        ROOT.resolve("dra-alloc/target/dra-alloc.jar"),
        copy.resolve("dra-alloc/target/dra-alloc.jar"));
    Files.createSymbolicLink(copy.resolve("examples"), ROOT.resolve("examples"));
    List<String> args = new ArrayList<>(List.of("-o", "summary"));
    for (String dir : List.of("examples/a100-or-2xl4", "examples/a100-or-2xl4/cluster")) {
      try (Stream<Path> files = Files.list(ROOT.resolve(dir))) {
        files.map(Path::toString).filter(f -> f.endsWith(".yaml")).sorted().forEach(args::add);
      }
    }
    return args;
  }

  private static List<Path> archives(Path copy) throws IOException {
    try (Stream<Path> files = Files.list(copy.resolve("dra-alloc/target"))) {
      return files.filter(f -> f.toString().endsWith(".jsa")).toList();
    }
  }

  private static UpstreamAlloc.Result launch(Path copy, List<String> args, String javaOpts)
      throws IOException, InterruptedException {
    return launch(copy, args, javaOpts, Map.of());
  }

  private static UpstreamAlloc.Result launch(
      Path copy, List<String> args, String javaOpts, Map<String, String> env)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(copy.resolve("bin/dra-alloc").toString()));
    command.addAll(args);
    File out = copy.resolve("out.txt").toFile();
    File err = copy.resolve("err.txt").toFile();
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectOutput(out)
            .redirectError(err)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    builder.environment().remove("DRA_ALLOC_JVM");
    builder.environment().put("DRA_ALLOC_JAVA_OPTS", javaOpts);
    builder.environment().putAll(env);
    Process p = builder.start();
    if (!p.waitFor(5, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new IllegalStateException("bin/dra-alloc did not finish in 5 minutes: " + command);
    }
    return new UpstreamAlloc.Result(
        p.exitValue(), Files.readString(out.toPath()), Files.readString(err.toPath()));
  }
}
