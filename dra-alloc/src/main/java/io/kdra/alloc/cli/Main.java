package io.kdra.alloc.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.whatif.WhatIf;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.DefaultParser;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;
import org.apache.commons.cli.ParseException;
import org.apache.commons.cli.help.HelpFormatter;
import org.apache.commons.cli.help.TextHelpAppendable;

/**
 * {@code dra-alloc}: what would the DRA allocator do with these objects? Reads DeviceClasses,
 * ResourceSlices, ResourceClaims, ResourceClaimTemplates, Nodes and Pods; prints the pending claims
 * as a {@code kind: List} with {@code status.allocation} filled where allocation succeeded;
 * explains every failure on stderr. Exit status: 0 all allocated, 1 some not (or a pod cannot run),
 * 2 bad input.
 *
 * <p>The command line is Apache Commons CLI's, not picocli's: a run lasts under a second, and
 * picocli's reflective set-up cost 0.03-0.05 s of its CPU, half of a {@code --version}
 * (docs/dev/benchmarks.md).
 */
public final class Main {

  static final String VERSION = "dra-alloc 0.1.0";

  private static final String SYNTAX = "dra-alloc [OPTION]... FILE...";

  private static final String DESCRIPTION =
      "Shows how Kubernetes DRA (resource.k8s.io/v1, as of 1.37) would allocate devices to"
          + " pending ResourceClaims. FILE: YAML or JSON files (multi-document, or kind: List);"
          + " - reads stdin.";

  private static final String EXIT_STATUS =
      "Exit status: 0 every pending claim allocated, 1 at least one not (or a pod whose claims"
          + " are allocated can run on no node), 2 bad input.";

  private static final Options OPTIONS =
      new Options()
          .addOption(
              Option.builder("o")
                  .longOpt("output")
                  .hasArg()
                  .argName("yaml|json|summary")
                  .desc(
                      "output format: the claims as a kind: List in yaml or json, or a summary of"
                          + " one line per allocated claim (default: yaml)")
                  .get())
          .addOption(
              Option.builder()
                  .longOpt("node")
                  .hasArg()
                  .argName("NAME")
                  .desc("only consider this node")
                  .get())
          .addOption(
              Option.builder()
                  .longOpt("feature-gates")
                  .hasArg()
                  .argName("GATE=BOOL,...")
                  .desc(
                      "allocator features as upstream components take them, e.g."
                          + " DRAPrioritizedList=false,DRAAdminAccess=true; known: DRAAdminAccess,"
                          + " DRAConsumableCapacity, DRADerivedAttributes,"
                          + " DRADeviceBindingConditions, DRADeviceCompatibilityGroups,"
                          + " DRADeviceTaints, DRAFractionalCapacityRange,"
                          + " DRAOptionalNodeOperations, DRAPartitionableDevices,"
                          + " DRAPrioritizedList (default: Kubernetes 1.37's, the alpha"
                          + " DRADerivedAttributes, DRADeviceCompatibilityGroups and"
                          + " DRAOptionalNodeOperations off)")
                  .get())
          .addOption(
              Option.builder("h").longOpt("help").desc("Show this help message and exit.").get())
          .addOption(
              Option.builder("V")
                  .longOpt("version")
                  .desc("Print version information and exit.")
                  .get());

  private final List<String> files;
  private final String output;
  private final String node;
  private final String featureGates;
  private final InputStream stdin;
  private final PrintStream out;
  private final PrintStream err;

  private Main(CommandLine line, InputStream stdin, PrintStream out, PrintStream err) {
    this.files = line.getArgList();
    this.output = line.getOptionValue("output", "yaml");
    this.node = line.getOptionValue("node");
    this.featureGates = line.getOptionValue("feature-gates", "");
    this.stdin = stdin;
    this.out = out;
    this.err = err;
  }

  public static void main(String[] args) {
    System.exit(run(args, System.in, System.out, System.err));
  }

  /** Runs the command with the given streams; returns the exit status. */
  public static int run(String[] args, InputStream stdin, PrintStream out, PrintStream err) {
    CommandLine line;
    try {
      line = DefaultParser.builder().get().parse(OPTIONS, args);
    } catch (ParseException e) {
      return usageError(e.getMessage(), err);
    }
    if (line.hasOption("help")) {
      usage(out);
      return 0;
    }
    if (line.hasOption("version")) {
      out.println(VERSION);
      out.flush();
      return 0;
    }
    if (line.getArgList().isEmpty()) {
      return usageError("missing FILE: name one or more YAML or JSON files, or - for stdin", err);
    }
    try {
      return new Main(line, stdin, out, err).call();
    } catch (RuntimeException e) {
      // a fault of this program, not of the input: never the 1 of "some claim not allocated"
      err.println("dra-alloc: internal error: " + e);
      e.printStackTrace(err);
      return 2;
    }
  }

  private static int usageError(String message, PrintStream err) {
    err.println("dra-alloc: " + message);
    err.println("Try 'dra-alloc --help' for more information.");
    err.flush();
    return 2;
  }

  private static void usage(PrintStream to) {
    TextHelpAppendable text = new TextHelpAppendable(to);
    text.setMaxWidth(100);
    try {
      HelpFormatter.builder()
          .setShowSince(false)
          .setHelpAppendable(text)
          .get()
          .printHelp(SYNTAX, DESCRIPTION, OPTIONS, EXIT_STATUS, false);
    } catch (IOException e) {
      throw new UncheckedIOException("printing the usage", e);
    }
    to.flush();
  }

  private int call() {
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
    WhatIf.Report report =
        new WhatIf(
                new WhatIf.Inputs(
                    inputs.classes,
                    inputs.slices,
                    inputs.claims,
                    inputs.templates,
                    inputs.nodes,
                    inputs.pods),
                options,
                node)
            .run();
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
