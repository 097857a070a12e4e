package io.kdra.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/dra-alloc}, the launcher users run, on a copy of the built jar: it prints what the
 * entry point prints in process, writes its class-data archive on the first run, and the next run
 * maps it ({@code -Xshare:on} makes a JVM that cannot map it fail) with the command's own classes
 * and its libraries' in it (docs/BENCHMARKS.md).
 */
class DraAllocLauncherIT {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  void printsWhatTheEntryPointPrintsAndReusesItsArchive(@TempDir Path copy) throws Exception {
    Files.createDirectories(copy.resolve("bin"));
    Files.createDirectories(copy.resolve("dra-alloc/target"));
    Files.copy(ROOT.resolve("bin/dra-alloc"), copy.resolve("bin/dra-alloc"));
    copy.resolve("bin/dra-alloc").toFile().setExecutable(true);
    Files.copy(
        ROOT.resolve("dra-alloc/target/dra-alloc.jar"),
        copy.resolve("dra-alloc/target/dra-alloc.jar"));
    Files.createSymbolicLink(copy.resolve("examples"), ROOT.resolve("examples"));
    List<String> args = new ArrayList<>(List.of("-o", "summary"));
    try (Stream<Path> files = Files.list(ROOT.resolve("examples/a100-or-2xl4"))) {
      files.map(Path::toString).filter(f -> f.endsWith(".yaml")).sorted().forEach(args::add);
    }
    UpstreamAlloc.Result inProcess = UpstreamAlloc.kdra(args);
    assertThat(inProcess.out()).isNotBlank();

    UpstreamAlloc.Result first = launch(copy, args, "");

    assertThat(first.exit()).isEqualTo(inProcess.exit());
    assertThat(first.out()).isEqualTo(inProcess.out());
    List<Path> archives;
    try (Stream<Path> files = Files.list(copy.resolve("dra-alloc/target"))) {
      archives = files.filter(f -> f.toString().endsWith(".jsa")).toList();
    }
    assertThat(archives).as("the class-data archive the first run writes").hasSize(1);

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

  private static UpstreamAlloc.Result launch(Path copy, List<String> args, String javaOpts)
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
    builder.environment().put("DRA_ALLOC_JAVA_OPTS", javaOpts);
    Process p = builder.start();
    if (!p.waitFor(5, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new IllegalStateException("bin/dra-alloc did not finish in 5 minutes: " + command);
    }
    return new UpstreamAlloc.Result(
        p.exitValue(), Files.readString(out.toPath()), Files.readString(err.toPath()));
  }
}
