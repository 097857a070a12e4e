package io.kdra.kubectl;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kdra.alloc.cli.InputException;
import io.kdra.alloc.cli.InputReader;
import io.kdra.alloc.cli.Inputs;
import io.kdra.core.alloc.AllocatorFeatures;
import io.kdra.core.alloc.AllocatorOptions;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code kubectl dra}: the kubectl plugin. A thin adapter: {@link LiveCluster} reads, the pure
 * {@link PodWhy}, {@link ClaimWhy}, {@link DeviceRows} and {@link WhatIfRun} decide (with the
 * claim-controller's and dra-core's own functions), {@link Render} words. Exit status: 0 answered,
 * 1 error (object not found, cluster unreachable, bad manifest), 2 bad usage, 3 {@code what-if}:
 * something would not fit.
 */
@Command(
    name = "kubectl dra",
    mixinStandardHelpOptions = true,
    version = "kubectl-dra 0.1.0",
    description =
        "Explains Kubernetes DRA (resource.k8s.io/v1) allocations on the live cluster "
            + "of the current kubeconfig, with kdra's claim-controller's own explanations.",
    subcommands = {Main.Why.class, Main.Devices.class, Main.WhatIf.class})
public final class Main implements Callable<Integer> {

  static final int ERROR = 1;
  static final int USAGE = 2;
  static final int DOES_NOT_FIT = 3;

  private PrintStream out;
  private PrintStream err;
  private InputStream stdin;

  /** What the claim-controller runs with by default. */
  static AllocatorOptions options() {
    return options(AllocatorFeatures.defaults());
  }

  /** What the claim-controller runs with, for these feature gates. */
  static AllocatorOptions options(AllocatorFeatures features) {
    return AllocatorOptions.defaults(features, () -> UUID.randomUUID().toString());
  }

  public static void main(String[] args) {
    System.exit(run(args, System.in, System.out, System.err));
  }

  /** Runs the command with the given streams; returns the exit status. */
  public static int run(String[] args, InputStream stdin, PrintStream out, PrintStream err) {
    Main main = new Main();
    main.out = out;
    main.err = err;
    main.stdin = stdin;
    CommandLine cli = new CommandLine(main);
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    cli.setExecutionExceptionHandler(
        (e, c, p) -> {
          err.println("error: " + e.getMessage());
          return ERROR;
        });
    cli.setParameterExceptionHandler(
        (ex, a) -> {
          err.println("error: " + ex.getMessage());
          ex.getCommandLine().usage(err);
          return USAGE;
        });
    return cli.execute(args);
  }

  @Override
  public Integer call() {
    new CommandLine(this).usage(out);
    return USAGE;
  }

  /** The kubectl-like connection options every command takes. */
  static final class Connection {
    @Option(
        names = "--kubeconfig",
        paramLabel = "FILE",
        description = "the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)")
    String kubeconfig;

    @Option(
        names = "--context",
        paramLabel = "NAME",
        description = "the kubeconfig context (default: its current context)")
    String context;

    @Option(
        names = {"-n", "--namespace"},
        paramLabel = "NAME",
        description = "the namespace (default: the context's, else default)")
    String namespace;
  }

  /**
   * The allocator's feature gates, as the claim-controller's {@code
   * kdra.claim-controller.allocator.feature-gates} and upstream's {@code --feature-gates} take
   * them: set them as the cluster's controller has them.
   */
  static final class FeatureGates {
    @Option(
        names = "--feature-gates",
        paramLabel = "GATE=BOOL,...",
        converter = GatesConverter.class,
        description =
            "allocator features, e.g. DRAPrioritizedList=false; known: DRAAdminAccess, "
                + "DRAConsumableCapacity, DRADerivedAttributes, DRADeviceBindingConditions, "
                + "DRADeviceCompatibilityGroups, DRADeviceTaints, DRAFractionalCapacityRange, "
                + "DRAOptionalNodeOperations, DRAPartitionableDevices, DRAPrioritizedList "
                + "(default: Kubernetes 1.37's, the alpha DRADerivedAttributes, "
                + "DRADeviceCompatibilityGroups and DRAOptionalNodeOperations off)")
    AllocatorFeatures features = AllocatorFeatures.defaults();
  }

  /** An unknown gate or a value that is no bool is a usage error naming it. */
  static final class GatesConverter implements ITypeConverter<AllocatorFeatures> {
    @Override
    public AllocatorFeatures convert(String gates) {
      try {
        return AllocatorFeatures.defaults().withGates(gates);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /** Runs {@code body} against the cluster; a failure becomes one line and exit status 1. */
  private int withCluster(Connection c, ClusterCommand body) {
    LiveCluster cluster;
    try {
      cluster = new LiveCluster(c.kubeconfig, c.context, c.namespace, err);
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      return ERROR;
    } catch (RuntimeException e) {
      err.println("error: cannot load the kubeconfig: " + e.getMessage());
      return ERROR;
    }
    try (cluster) {
      return body.run(cluster);
    } catch (InputException e) {
      err.println("error: " + e.getMessage());
      return ERROR;
    } catch (RuntimeException e) {
      err.println("error: " + Errors.describe(e, cluster.server()));
      return ERROR;
    }
  }

  private interface ClusterCommand {
    int run(LiveCluster cluster) throws InputException;
  }

  private int print(List<String> lines) {
    lines.forEach(out::println);
    out.flush();
    return 0;
  }

  @Command(
      name = "why",
      mixinStandardHelpOptions = true,
      description =
          "Why is this pod or ResourceClaim pending? The claim-controller's "
              + "explanation for the cluster as it is now, per request and per node tried.")
  static final class Why implements Callable<Integer> {
    @CommandLine.ParentCommand Main main;
    @Mixin Connection connection = new Connection();
    @Mixin FeatureGates gates = new FeatureGates();

    @Parameters(paramLabel = "TYPE/NAME", description = "pod/NAME or resourceclaim/NAME")
    String target;

    @Override
    public Integer call() {
      Target t;
      try {
        t = Target.parse(target);
      } catch (IllegalArgumentException e) {
        main.err.println("error: " + e.getMessage());
        return USAGE;
      }
      return main.withCluster(
          connection,
          cluster -> {
            String ns = cluster.namespace();
            if (t.kind() == Target.Kind.POD) {
              Pod pod = cluster.pod(t.name()).orElse(null);
              if (pod == null) {
                return notFound("pods", t.name(), ns);
              }
              return main.print(
                  Render.pod(pod, PodWhy.explain(pod, cluster.state(), options(gates.features))));
            }
            ResourceClaim claim = cluster.claim(t.name()).orElse(null);
            if (claim == null) {
              return notFound("resourceclaims", t.name(), ns);
            }
            return main.print(
                Render.claim(
                    claim, ClaimWhy.explain(claim, cluster.state(), options(gates.features))));
          });
    }

    private int notFound(String resource, String name, String ns) {
      main.err.println(
          "error: " + resource + " \"" + name + "\" not found in namespace \"" + ns + "\"");
      return ERROR;
    }
  }

  @Command(
      name = "devices",
      mixinStandardHelpOptions = true,
      description =
          "Every published device: its node, the DeviceClasses it matches, the claim "
              + "holding it, its taints.")
  static final class Devices implements Callable<Integer> {
    @CommandLine.ParentCommand Main main;
    @Mixin Connection connection = new Connection();
    @Mixin FeatureGates gates = new FeatureGates();

    @Override
    public Integer call() {
      return main.withCluster(
          connection,
          cluster -> {
            ClusterState s = cluster.state();
            return main.print(
                Render.devices(
                    DeviceRows.rows(
                        s.slices(),
                        s.deviceClasses(),
                        s.claims(),
                        DeviceSelectorEnvironment.create(gates.features.consumableCapacity()))));
          });
    }
  }

  @Command(
      name = "what-if",
      mixinStandardHelpOptions = true,
      description = {
        "Would these new objects fit now? Places the manifest's pods (and claims "
            + "no pod of it uses) as the claim-controller would, on the live cluster's free "
            + "devices; writes nothing.",
        "Exit status: 0 everything fits, 3 something does not."
      })
  static final class WhatIf implements Callable<Integer> {
    @CommandLine.ParentCommand Main main;
    @Mixin Connection connection = new Connection();
    @Mixin FeatureGates gates = new FeatureGates();

    @Option(
        names = {"-f", "--filename"},
        required = true,
        paramLabel = "FILE",
        description =
            "manifest (YAML or JSON, multi-document or kind: List; - reads stdin); " + "repeatable")
    List<String> files;

    @Override
    public Integer call() {
      return main.withCluster(
          connection,
          cluster -> {
            Inputs manifest = new Inputs();
            InputReader reader = new InputReader("kubectl-dra", main.err);
            for (String f : files) {
              reader.read(f, main.stdin, manifest);
            }
            List<WhatIfRun.Row> rows =
                WhatIfRun.run(
                    manifest, cluster.namespace(), cluster.state(), options(gates.features));
            main.print(Render.whatIf(rows));
            return rows.stream().allMatch(WhatIfRun.Row::fits) ? 0 : DOES_NOT_FIT;
          });
    }
  }
}
