package io.kdra.devicedriver.sharing;

import io.kdra.core.model.AttributeValue;
import io.kdra.devicedriver.discovery.DiscoveryException;
import io.kdra.devicedriver.discovery.MigMode;
import io.kdra.devicedriver.discovery.MigParser;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.prepare.DeviceSetup;
import io.kdra.devicedriver.prepare.PrepareException;
import io.kdra.devicedriver.sharing.CommandRunner.Command;
import io.kdra.devicedriver.sharing.CommandRunner.CommandException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Prepares MIG partitions ({@code type: mig} devices of {@link
 * io.kdra.devicedriver.discovery.MigDevices}).
 *
 * <ul>
 *   <li>dynamic: finds the GPU instance of the partition's profile at its placement ({@code
 *       nvidia-smi mig -i <gpu> -lgi}) or creates it with a compute instance ({@code -cgi
 *       <profile>:<start> -C}); a GPU instance without a compute instance gets one ({@code -gi <id>
 *       -cci}). The unprepare of its last user destroys both ({@code -gi <id> -dci}, {@code -dgi});
 *       an adminAccess claim neither creates nor destroys one. Finding before creating makes a
 *       repeated prepare reuse what a crashed one created.
 *   <li>static: uses the instance discovery found ({@code migInstanceId}); creates and destroys
 *       nothing, and fails naming the instance if it is gone.
 * </ul>
 *
 * The container gets the parent GPU's device node (already on the device) and the MIG capability
 * nodes of the instances ({@code /dev/nvidia-caps/nvidia-cap<n>}, numbers from {@code
 * /proc/driver/nvidia-caps/mig-minors} under the host root), and {@code KDRA_MIG_DEVICE=MIG-<parent
 * uuid>/<gi>/<ci>}, the form CUDA accepts in {@code CUDA_VISIBLE_DEVICES}. Thread-safe.
 */
public final class MigSetup implements DeviceSetup {
  private static final Pattern MINOR_LINE = Pattern.compile("^(\\S+)\\s+(\\d+)$");

  private final MigMode mode;
  private final CommandRunner runner;
  private final String smiPath;
  private final Path hostRoot;

  public MigSetup(MigMode mode, CommandRunner runner, String smiPath, Path hostRoot) {
    this.mode = mode;
    this.runner = runner;
    this.smiPath = smiPath;
    this.hostRoot = hostRoot;
  }

  /** Whether this device is a MIG partition. */
  public static boolean isPartition(NodeDevice d) {
    return new AttributeValue.StringValue("mig").equals(d.attributes().get("type"));
  }

  @Override
  public boolean involves(NodeDevice d) {
    return isPartition(d) && mode != MigMode.OFF;
  }

  @Override
  public synchronized DeviceEdits prepare(Allocated a) throws PrepareException {
    NodeDevice d = a.device();
    if (!isPartition(d) || mode == MigMode.OFF) {
      return DeviceEdits.NONE;
    }
    String gpu = Long.toString(number(d, "parentIndex"));
    int gi;
    if (mode == MigMode.STATIC) {
      gi = (int) number(d, "migInstanceId");
      if (find(d).isEmpty()) {
        throw new PrepareException(
            "device " + d.name(),
            "GPU instance "
                + gi
                + " of GPU "
                + gpu
                + " no longer exists (static MIG: an admin creates instances with nvidia-smi mig"
                + " -cgi)");
      }
    } else {
      Optional<MigParser.GpuInstance> existing = find(d);
      if (existing.isPresent()) {
        gi = existing.get().id();
      } else {
        String out =
            run(
                d,
                "mig",
                "-i",
                gpu,
                "-cgi",
                number(d, "migProfileId") + ":" + number(d, "placementStart"),
                "-C");
        gi =
            MigParser.createdGpuInstance(out)
                .orElseThrow(
                    () ->
                        new PrepareException(
                            "device " + d.name(),
                            "nvidia-smi did not report the GPU instance it created: "
                                + out.strip().lines().findFirst().orElse("(no output)")));
      }
    }
    int ci = computeInstance(d, gpu, gi);
    List<String> env = new ArrayList<>();
    env.add("KDRA_MIG_PROFILE=" + text(d, "profile"));
    env.add("KDRA_MIG_GPU_INSTANCE_ID=" + gi);
    env.add("KDRA_MIG_COMPUTE_INSTANCE_ID=" + ci);
    if (d.attributes().get("parentUuid") instanceof AttributeValue.StringValue uuid) {
      env.add("KDRA_MIG_DEVICE=MIG-" + uuid.value() + "/" + gi + "/" + ci);
    }
    return new DeviceEdits(env, capabilityNodes(d, gi, ci), List.of());
  }

  @Override
  public synchronized void release(NodeDevice d, boolean lastUser) throws PrepareException {
    if (!isPartition(d) || mode != MigMode.DYNAMIC || !lastUser) {
      return; // another claim still runs on the instance
    }
    Optional<MigParser.GpuInstance> existing = find(d);
    if (existing.isEmpty()) {
      return; // already destroyed (a repeated unprepare)
    }
    String gpu = Long.toString(number(d, "parentIndex"));
    String gi = Integer.toString(existing.get().id());
    if (!computeInstances(d, gpu, existing.get().id()).isEmpty()) {
      run(d, "mig", "-i", gpu, "-gi", gi, "-dci");
    }
    run(d, "mig", "-i", gpu, "-gi", gi, "-dgi");
  }

  /** The GPU instance at this partition's placement, of its profile. */
  private Optional<MigParser.GpuInstance> find(NodeDevice d) throws PrepareException {
    long gpu = number(d, "parentIndex");
    String out = list(d, "No GPU instances found", "mig", "-i", Long.toString(gpu), "-lgi");
    try {
      return MigParser.gpuInstances(out).stream()
          .filter(
              gi ->
                  gi.gpu() == gpu
                      && gi.profileId() == number(d, "migProfileId")
                      && gi.start() == number(d, "placementStart"))
          .findFirst();
    } catch (DiscoveryException e) {
      throw new PrepareException("device " + d.name(), e.getMessage());
    }
  }

  private int computeInstance(NodeDevice d, String gpu, int gi) throws PrepareException {
    List<MigParser.ComputeInstance> cis = computeInstances(d, gpu, gi);
    if (!cis.isEmpty()) {
      return cis.get(0).id();
    }
    if (mode == MigMode.STATIC) {
      throw new PrepareException(
          "device " + d.name(),
          "GPU instance "
              + gi
              + " of GPU "
              + gpu
              + " has no compute instance (static MIG: create one with nvidia-smi mig -cci)");
    }
    String out = run(d, "mig", "-i", gpu, "-gi", Integer.toString(gi), "-cci");
    OptionalInt ci = MigParser.createdComputeInstance(out);
    if (ci.isEmpty()) {
      throw new PrepareException(
          "device " + d.name(),
          "nvidia-smi did not report the compute"
              + " instance it created: "
              + out.strip().lines().findFirst().orElse("(no output)"));
    }
    return ci.getAsInt();
  }

  private List<MigParser.ComputeInstance> computeInstances(NodeDevice d, String gpu, int gi)
      throws PrepareException {
    String out =
        list(
            d, "No compute instances found", "mig", "-i", gpu, "-gi", Integer.toString(gi), "-lci");
    try {
      return MigParser.computeInstances(out).stream().filter(c -> c.gpuInstance() == gi).toList();
    } catch (DiscoveryException e) {
      throw new PrepareException("device " + d.name(), e.getMessage());
    }
  }

  /**
   * {@code /dev/nvidia-caps/nvidia-cap<n>} of the instances; {@code mig-minors} names GPUs by minor
   * number ({@code gpu0/gi2/access 21}). Absent on simulated hosts.
   */
  private List<String> capabilityNodes(NodeDevice d, int gi, int ci) {
    Path minors = hostRoot.resolve("proc/driver/nvidia-caps/mig-minors");
    if (!Files.exists(minors)) {
      return List.of();
    }
    long minor =
        d.attributes().get("minor") instanceof AttributeValue.IntValue m
            ? m.value()
            : number(d, "parentIndex");
    String giKey = "gpu" + minor + "/gi" + gi + "/access";
    String ciKey = "gpu" + minor + "/gi" + gi + "/ci" + ci + "/access";
    List<String> nodes = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(minors, StandardCharsets.UTF_8)) {
        Matcher m = MINOR_LINE.matcher(line.strip());
        if (m.matches() && (m.group(1).equals(giKey) || m.group(1).equals(ciKey))) {
          nodes.add("/dev/nvidia-caps/nvidia-cap" + m.group(2));
        }
      }
    } catch (IOException e) {
      return List.of();
    }
    return nodes;
  }

  /** A listing; nvidia-smi exits non-zero when there is nothing to list, which is an answer. */
  private String list(NodeDevice d, String nothing, String... args) throws PrepareException {
    try {
      return run(d, args);
    } catch (PrepareException e) {
      if (e.getMessage().contains(nothing)) {
        return "";
      }
      throw e;
    }
  }

  private String run(NodeDevice d, String... args) throws PrepareException {
    List<String> argv = new ArrayList<>();
    argv.add(smiPath);
    argv.addAll(List.of(args));
    try {
      return runner.run(new Command(argv, Map.of(), "")).text();
    } catch (CommandException e) {
      throw new PrepareException("device " + d.name(), e.getMessage());
    }
  }

  private static long number(NodeDevice d, String attribute) {
    if (d.attributes().get(attribute) instanceof AttributeValue.IntValue i) {
      return i.value();
    }
    throw new IllegalStateException(
        "MIG device " + d.name() + " has no int attribute " + attribute);
  }

  private static String text(NodeDevice d, String attribute) {
    return d.attributes().get(attribute) instanceof AttributeValue.StringValue s ? s.value() : "";
  }
}
