package io.kdra.devicedriver.discovery;

import io.kdra.devicedriver.discovery.NvidiaSmiParser.SmiGpu;
import io.kdra.devicedriver.process.BoundedProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.logging.Logger;

/**
 * NVIDIA GPUs via nvidia-smi, plus two host facts nvidia-smi does not print: the device minor
 * number (from {@code /proc/driver/nvidia/gpus/<bus id>/information}, so the CDI spec names the
 * right {@code /dev/nvidia<minor>}, which need not equal the index) and the PCIe root (from the
 * {@code /sys/bus/pci/devices/<bus id>} link). Both are read under a configurable host root.
 *
 * <p>Why nvidia-smi and not NVML: no native binding is needed in a Java process, and the CSV query
 * is a stable, documented interface. The cost is one process per discovery pass.
 */
public final class NvidiaBackend implements DiscoveryBackend {
  private static final Logger LOG = Logger.getLogger(NvidiaBackend.class);
  private static final Pattern MINOR = Pattern.compile("(?m)^Device Minor:\\s*(\\d+)\\s*$");
  private static final List<String> CONTROL_NODES =
      List.of("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools");

  private final String smiPath;
  private final Duration timeout;
  private final Path hostRoot;
  private final MigMode mig;

  public NvidiaBackend(String smiPath, Duration timeout, Path hostRoot) {
    this(smiPath, timeout, hostRoot, MigMode.OFF);
  }

  /**
   * @param mig how GPUs with MIG mode enabled are published
   */
  public NvidiaBackend(String smiPath, Duration timeout, Path hostRoot, MigMode mig) {
    this.smiPath = smiPath;
    this.timeout = timeout;
    this.hostRoot = hostRoot;
    this.mig = mig;
  }

  /**
   * The {@code nvidia-smi mig} tables a pass needs: {@code -lgip} always, {@code -lgipp} (dynamic)
   * or {@code -lgi} (static); empty strings for the others.
   */
  public record MigTables(String lgip, String lgipp, String lgi) {
    public static final MigTables NONE = new MigTables("", "", "");
  }

  @Override
  public String name() {
    return "nvidia";
  }

  @Override
  public Inventory discover() throws DiscoveryException {
    String gpus = run("--query-gpu=" + NvidiaSmiParser.QUERY, "--format=csv,noheader,nounits");
    MigTables tables = MigTables.NONE;
    if (mig != MigMode.OFF
        && NvidiaSmiParser.parse(gpus).gpus().stream()
            .anyMatch(g -> g.migEnabled().orElse(false))) {
      tables =
          new MigTables(
              run("mig", "-lgip"),
              mig == MigMode.DYNAMIC ? run("mig", "-lgipp") : "",
              mig == MigMode.STATIC ? run("mig", "-lgi") : "");
    }
    return inventory(gpus, hostRoot, mig, tables);
  }

  /** Builds the inventory from nvidia-smi output and the host tree; no process involved. */
  public static Inventory inventory(String smiOutput, Path hostRoot) throws DiscoveryException {
    return inventory(smiOutput, hostRoot, MigMode.OFF, MigTables.NONE);
  }

  /**
   * As {@link #inventory(String, Path)}, with MIG-enabled GPUs split into partitions as {@code mig}
   * says (see {@link MigDevices}).
   */
  public static Inventory inventory(String smiOutput, Path hostRoot, MigMode mig, MigTables tables)
      throws DiscoveryException {
    NvidiaSmiParser.Result parsed = NvidiaSmiParser.parse(smiOutput);
    parsed.problems().forEach(p -> LOG.warnf("%s", p));
    List<MigParser.Profile> profiles =
        tables.lgip().isEmpty() ? List.of() : MigParser.profiles(tables.lgip());
    List<MigParser.Placements> placements =
        tables.lgipp().isEmpty() ? List.of() : MigParser.placements(tables.lgipp());
    List<MigParser.GpuInstance> instances =
        tables.lgi().isEmpty() ? List.of() : MigParser.gpuInstances(tables.lgi());
    List<NodeDevice> devices = new ArrayList<>();
    List<CounterSet> counters = new ArrayList<>();
    for (SmiGpu g : parsed.gpus()) {
      Optional<String> bus = g.pciBusId().map(NvidiaDevices::busId);
      NodeDevice gpu =
          NvidiaDevices.device(
              g,
              bus.map(b -> minor(hostRoot, b)).orElse(OptionalInt.empty()),
              bus.flatMap(b -> pcieRoot(hostRoot, b)));
      boolean migEnabled = g.migEnabled().orElse(false);
      if (!migEnabled || mig == MigMode.OFF) {
        devices.add(gpu);
      } else if (mig == MigMode.DYNAMIC) {
        MigDevices.Partitioned p = MigDevices.dynamic(gpu, g.index(), profiles, placements);
        devices.addAll(p.devices());
        counters.add(p.counters());
      } else {
        devices.addAll(MigDevices.existing(gpu, g.index(), profiles, instances));
      }
    }
    List<String> common =
        CONTROL_NODES.stream().filter(n -> Files.exists(hostRoot.resolve(n.substring(1)))).toList();
    try {
      return new Inventory(devices, counters, common);
    } catch (IllegalArgumentException e) {
      throw new DiscoveryException("nvidia-smi output: " + e.getMessage());
    }
  }

  static OptionalInt minor(Path hostRoot, String busId) {
    Path info = hostRoot.resolve("proc/driver/nvidia/gpus").resolve(busId).resolve("information");
    try {
      Matcher m = MINOR.matcher(Files.readString(info, StandardCharsets.UTF_8));
      return m.find() ? OptionalInt.of(Integer.parseInt(m.group(1))) : OptionalInt.empty();
    } catch (IOException e) {
      return OptionalInt.empty();
    }
  }

  static Optional<String> pcieRoot(Path hostRoot, String busId) {
    Path link = hostRoot.resolve("sys/bus/pci/devices").resolve(busId);
    try {
      // .../devices/pci0000:00/0000:00:01.0/0000:4f:00.0 -> pci0000:00
      for (Path part : link.toRealPath()) {
        if (part.toString().startsWith("pci")) {
          return Optional.of(part.toString());
        }
      }
    } catch (IOException e) {
      // not on this host (or not visible in the container): leave the attribute out
    }
    return Optional.empty();
  }

  private String run(String... args) throws DiscoveryException {
    List<String> argv = new ArrayList<>();
    argv.add(smiPath);
    argv.addAll(List.of(args));
    try {
      BoundedProcess.Result r = BoundedProcess.run(argv, Map.of(), "", timeout);
      String text = r.output();
      // "nvidia-smi mig -lgi" on a GPU without instances exits non-zero; that is an answer
      if (r.exitCode() != 0 && !text.contains("No GPU instances found")) {
        throw new DiscoveryException(
            smiPath
                + " exited with "
                + r.exitCode()
                + ": "
                + text.strip().lines().findFirst().orElse("(no output)"));
      }
      return text;
    } catch (BoundedProcess.TimedOut e) {
      // a hung nvidia-smi is the usual sign of a GPU in trouble: the pass fails, and the devices'
      // health goes Unknown, instead of discovery stopping
      throw new DiscoveryException(String.join(" ", argv) + " " + e.getMessage());
    } catch (IOException e) {
      throw new DiscoveryException("cannot run " + smiPath + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DiscoveryException("interrupted while running " + smiPath, e);
    }
  }
}
