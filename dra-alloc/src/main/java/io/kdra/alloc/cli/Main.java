package io.kdra.alloc.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code dra-alloc}: what would the DRA allocator do with these objects? Reads DeviceClasses,
 * ResourceSlices, ResourceClaims, ResourceClaimTemplates, Nodes and Pods; prints the pending claims
 * as a {@code kind: List} with {@code status.allocation} filled where allocation succeeded;
 * explains every failure on stderr. Exit status: 0 all allocated, 1 some not (or a pod cannot run),
 * 2 bad input.
 */
@Command(
    name = "dra-alloc",
    mixinStandardHelpOptions = true,
    version = "dra-alloc 0.1.0",
    description = {
      "Shows how Kubernetes DRA (resource.k8s.io/v1, as of 1.36) would allocate "
          + "devices to pending ResourceClaims.",
      "Exit status: 0 every pending claim allocated, 1 at least one not (or a pod "
          + "whose claims are allocated can run on no node), 2 bad input."
    })
public final class Main implements Callable<Integer> {

  @Parameters(
      arity = "1..*",
      paramLabel = "FILE",
      description = "YAML or JSON files (multi-document, or kind: List); - reads stdin")
  List<String> files;

  @Option(
      names = {"-o", "--output"},
      defaultValue = "yaml",
      paramLabel = "yaml|json|summary",
      description =
          "output format: the claims as a kind: List in yaml or json, or a summary of "
              + "one line per allocated claim (default: ${DEFAULT-VALUE})")
  String output;

  @Option(names = "--node", paramLabel = "NAME", description = "only consider this node")
  String node;

  @Option(
      names = "--feature-gates",
      paramLabel = "GATE=BOOL,...",
      defaultValue = "",
      description =
          "allocator features as upstream components take them, e.g. "
              + "DRAPrioritizedList=false,DRAAdminAccess=true; known: DRAAdminAccess, "
              + "DRAConsumableCapacity, DRADeviceBindingConditions, DRADeviceTaints, "
              + "DRAPartitionableDevices, DRAPrioritizedList (default: Kubernetes 1.36's, all on)")
  String featureGates;

  private InputStream stdin;
  private PrintStream out;
  private PrintStream err;

  public static void main(String[] args) {
    System.exit(run(args, System.in, System.out, System.err));
  }

  /** Runs the command with the given streams; returns the exit status. */
  public static int run(String[] args, InputStream stdin, PrintStream out, PrintStream err) {
    Main main = new Main();
    main.stdin = stdin;
    main.out = out;
    main.err = err;
    CommandLine cli = new CommandLine(main);
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    cli.setExitCodeExceptionMapper(e -> 2);
    cli.setParameterExceptionHandler(
        (ex, a) -> {
          err.println("dra-alloc: " + ex.getMessage());
          ex.getCommandLine().usage(err);
          return 2;
        });
    return cli.execute(args);
  }

  @Override
  public Integer call() {
    if (!List.of("yaml", "json", "summary").contains(output)) {
      err.println("dra-alloc: option -o: must be yaml, json or summary, not \"" + output + "\"");
      return 2;
    }
    AllocatorFeatures features;
    try {
      features = AllocatorFeatures.defaults().withGates(featureGates);
    } catch (IllegalArgumentException e) {
      err.println("dra-alloc: option --feature-gates: " + e.getMessage());
      return 2;
    }
    Inputs inputs = new Inputs();
    InputReader reader = new InputReader(err);
    try {
      for (String f : files) {
        reader.read(f, stdin, inputs);
      }
    } catch (InputException e) {
      err.println("dra-alloc: " + e.getMessage());
      return 2;
    }
    AllocatorOptions options =
        AllocatorOptions.defaults(features, () -> UUID.randomUUID().toString());
    WhatIf.Report report = new WhatIf(inputs, options, node).run();
    if (output.equals("summary")) {
      report.claims().stream().map(Summary::line).flatMap(Optional::stream).forEach(out::println);
      out.flush();
    } else {
      print(report);
    }
    report.failures().forEach(err::println);
    return report.failures().isEmpty() ? 0 : 1;
  }

  private void print(WhatIf.Report report) {
    Map<String, Object> list = new LinkedHashMap<>();
    list.put("apiVersion", "v1");
    list.put("kind", "List");
    list.put("items", report.claims());
    ObjectMapper mapper =
        output.equals("json")
            ? new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            : new ObjectMapper(
                YAMLFactory.builder()
                    .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                    .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
                    .disable(YAMLGenerator.Feature.SPLIT_LINES)
                    .enable(YAMLGenerator.Feature.INDENT_ARRAYS_WITH_INDICATOR)
                    .build());
    mapper.setSerializationInclusion(JsonInclude.Include.NON_EMPTY);
    try {
      out.print(mapper.writeValueAsString(list));
      if (output.equals("json")) {
        out.println();
      }
      out.flush();
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot print claims", e);
    }
  }
}
