package io.kdra.devicedriver.sharing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kdra.devicedriver.sharing.CommandRunner.Command;
import io.kdra.devicedriver.sharing.CommandRunner.Output;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Answers the {@code nvidia-smi mig} commands of {@link MigSetup} as a GPU would, keeping the GPU
 * and compute instances in memory: the answers of the {@link RecordingCommandRunner} on simulated
 * hardware, so that dynamic MIG goes through create, find and destroy there too. Output has the
 * shape the real tool prints (the same parser reads it). It also plays the MPS control daemons of
 * {@link GpuSharingSetup}: {@code -d} starts one per pipe directory and creates its {@code control}
 * socket file, as the real daemon does (a second start fails), {@code quit} stops it and removes
 * the file, {@code get_server_list} fails without a daemon (and lists no servers: no CUDA client
 * runs here), {@code set_default_*} is remembered ({@link #mpsDefaults}); {@link #killMpsDaemons}
 * is the driver container dying, which leaves the files behind. It remembers each GPU's compute
 * mode ({@code -i <gpu> -c <mode>}) and time-slice interval ({@code compute-policy -i <gpu>
 * --set-timeslice <n>}); anything else succeeds silently.
 *
 * <p>With a state file ({@link #persistedIn}), it is hardware that outlives the driver process: the
 * GPU and compute instances, compute modes and intervals are written there after every command and
 * read back when the next driver process starts; the MPS daemons are not (they die with the
 * driver), so that a test can compare what the GPU holds with what the driver's checkpoint implies.
 * Thread-safe through the runner, which answers one command at a time.
 */
public final class SimulatedNvidiaSmi implements Function<Command, Output> {
  private record Instance(int gpu, int id, int profileId, int start, boolean computeInstance) {}

  static final String PIPE_VARIABLE = "CUDA_MPS_PIPE_DIRECTORY";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<Instance> instances = new ArrayList<>();
  private final Set<String> mpsDaemons = new TreeSet<>();
  // per pipe directory: what its daemon was told with set_default_* (lost on quit, as the real one)
  private final Map<String, Map<String, String>> mpsDefaults = new TreeMap<>();
  // per GPU as nvidia-smi -i names it
  private final Map<String, String> computeModes = new TreeMap<>();
  private final Map<String, Integer> timeSlices = new TreeMap<>();
  private int nextId = 1;

  /** Where the state is kept across driver processes; null: in memory only. */
  private final Path stateFile;

  /** A GPU that starts blank and lives as long as this object. */
  public SimulatedNvidiaSmi() {
    this.stateFile = null;
  }

  private SimulatedNvidiaSmi(Path stateFile) {
    this.stateFile = stateFile;
  }

  /**
   * A GPU whose state is kept in {@code stateFile}: what an earlier driver process left there is
   * read now (its MPS daemons died with it), and the state is written there after every command.
   *
   * @throws UncheckedIOException when the file exists and cannot be read as such a state
   */
  public static SimulatedNvidiaSmi persistedIn(Path stateFile) {
    SimulatedNvidiaSmi smi = new SimulatedNvidiaSmi(stateFile);
    if (Files.exists(stateFile)) {
      try {
        smi.load(JSON.readTree(stateFile.toFile()));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read the simulated GPU state " + stateFile, e);
      }
    }
    return smi;
  }

  /** Each GPU's compute mode, as last set ({@code DEFAULT}, {@code EXCLUSIVE_PROCESS}, ...). */
  public synchronized Map<String, String> computeModes() {
    return Map.copyOf(computeModes);
  }

  /** Each GPU's time-slice interval, as last set (0 = Default ... 3 = Long). */
  public synchronized Map<String, Integer> timeSlices() {
    return Map.copyOf(timeSlices);
  }

  /** The GPU instances as {@code <gpu>:<profile id>:<placement start>}, with a compute instance. */
  public synchronized Set<String> gpuInstances() {
    Set<String> out = new TreeSet<>();
    for (Instance gi : instances) {
      out.add(
          gi.gpu()
              + ":"
              + gi.profileId()
              + ":"
              + gi.start()
              + (gi.computeInstance() ? "" : " (no compute instance)"));
    }
    return out;
  }

  /** The pipe directories of the MPS control daemons running now. */
  public synchronized Set<String> mpsDaemons() {
    return Set.copyOf(mpsDaemons);
  }

  /**
   * The server defaults the daemon on this pipe directory was given ({@code
   * set_default_active_thread_percentage 25} is {@code active_thread_percentage=25}, {@code
   * set_default_device_pinned_mem_limit 0 20480M} is {@code device_pinned_mem_limit 0=20480M}),
   * until it quits or dies.
   */
  public synchronized Map<String, String> mpsDefaults(String pipe) {
    return Map.copyOf(mpsDefaults.getOrDefault(pipe, Map.of()));
  }

  /** Every MPS daemon dies (the driver container went), its control socket file stays behind. */
  public synchronized void killMpsDaemons() {
    mpsDaemons.clear();
    mpsDefaults.clear();
  }

  @Override
  public synchronized Output apply(Command c) {
    Output out = answer(c);
    if (stateFile != null) {
      save();
    }
    return out;
  }

  private Output answer(Command c) {
    if (c.env().containsKey(PIPE_VARIABLE)) {
      return mpsControl(c);
    }
    List<String> a = c.argv();
    if (a.size() == 5 && a.get(1).equals("-i") && a.get(3).equals("-c")) {
      computeModes.put(a.get(2), a.get(4));
      return new Output(0, "");
    }
    if (a.size() == 6
        && a.get(1).equals("compute-policy")
        && a.get(2).equals("-i")
        && a.get(4).equals("--set-timeslice")) {
      timeSlices.put(a.get(3), Integer.parseInt(a.get(5)));
      return new Output(0, "");
    }
    if (a.size() < 4 || !a.get(1).equals("mig") || !a.get(2).equals("-i")) {
      return new Output(0, "");
    }
    int gpu = Integer.parseInt(a.get(3));
    String op = a.get(a.size() - 1);
    if (op.equals("-lgi")) {
      return listGpuInstances(gpu);
    }
    if (a.size() >= 6 && a.get(4).equals("-cgi")) {
      String[] p = a.get(5).split(":");
      Instance gi =
          new Instance(
              gpu, nextId++, Integer.parseInt(p[0]), Integer.parseInt(p[1]), a.contains("-C"));
      instances.add(gi);
      String out =
          "Successfully created GPU instance ID  "
              + gi.id()
              + " on GPU  "
              + gpu
              + " using profile MIG p"
              + gi.profileId()
              + " (ID  "
              + gi.profileId()
              + ")\n";
      if (gi.computeInstance()) {
        out +=
            "Successfully created compute instance ID  0 on GPU  "
                + gpu
                + " GPU instance ID  "
                + gi.id()
                + " using profile MIG p"
                + gi.profileId()
                + "\n";
      }
      return new Output(0, out);
    }
    if (a.size() >= 7 && a.get(4).equals("-gi")) {
      int id = Integer.parseInt(a.get(5));
      Instance gi =
          instances.stream().filter(x -> x.gpu() == gpu && x.id() == id).findFirst().orElse(null);
      if (gi == null) {
        return new Output(6, "Unable to find GPU instance ID " + id + ": Not Found");
      }
      switch (op) {
        case "-lci" -> {
          return gi.computeInstance()
              ? new Output(
                  0,
                  "|   "
                      + gpu
                      + "      "
                      + id
                      + "       MIG p"
                      + gi.profileId()
                      + "          0         0          0:1     |\n")
              : new Output(0, "No compute instances found: Not Found\n");
        }
        case "-cci" -> {
          replace(gi, true);
          return new Output(
              0,
              "Successfully created compute instance ID  0 on GPU  "
                  + gpu
                  + " GPU instance ID  "
                  + id
                  + "\n");
        }
        case "-dci" -> {
          replace(gi, false);
          return new Output(
              0,
              "Successfully destroyed compute instance ID  0 from GPU  "
                  + gpu
                  + " GPU instance ID  "
                  + id
                  + "\n");
        }
        case "-dgi" -> {
          instances.remove(gi);
          return new Output(
              0, "Successfully destroyed GPU instance ID  " + id + " from GPU  " + gpu + "\n");
        }
        default -> {
          return new Output(0, "");
        }
      }
    }
    return new Output(0, "");
  }

  private Output mpsControl(Command c) {
    String pipe = c.env().get(PIPE_VARIABLE);
    Path control = Path.of(pipe, "control");
    if (c.argv().contains("-d")) {
      if (!mpsDaemons.add(pipe)) {
        return new Output(1, "An instance of this daemon is already running");
      }
      try {
        Files.createDirectories(control.getParent());
        Files.writeString(control, "");
      } catch (IOException e) {
        return new Output(1, "cannot create " + control + ": " + e.getMessage());
      }
      return new Output(0, "");
    }
    if (!mpsDaemons.contains(pipe)) {
      return new Output(1, "Cannot find MPS control daemon process");
    }
    String[] words = c.stdin().strip().split("\\s+");
    if (words[0].startsWith("set_default_") && words.length >= 2) {
      // the setting and its device, if it names one: the value is the last word
      String key =
          words[0].substring("set_default_".length()) + (words.length == 3 ? " " + words[1] : "");
      mpsDefaults.computeIfAbsent(pipe, k -> new TreeMap<>()).put(key, words[words.length - 1]);
    }
    if (c.stdin().strip().equals("quit")) {
      mpsDaemons.remove(pipe);
      mpsDefaults.remove(pipe);
      try {
        Files.deleteIfExists(control);
      } catch (IOException e) {
        return new Output(1, "cannot remove " + control + ": " + e.getMessage());
      }
    }
    return new Output(0, "");
  }

  private void replace(Instance gi, boolean computeInstance) {
    instances.set(
        instances.indexOf(gi),
        new Instance(gi.gpu(), gi.id(), gi.profileId(), gi.start(), computeInstance));
  }

  private Output listGpuInstances(int gpu) {
    StringBuilder b = new StringBuilder();
    for (Instance gi : instances) {
      if (gi.gpu() == gpu) {
        b.append("|   ")
            .append(gpu)
            .append("  MIG p")
            .append(gi.profileId())
            .append("        ")
            .append(gi.profileId())
            .append("        ")
            .append(gi.id())
            .append("          ")
            .append(gi.start())
            .append(":1     |\n");
      }
    }
    return new Output(0, b.isEmpty() ? "No GPU instances found: Not Found\n" : b.toString());
  }

  /** The state as JSON, written beside and moved over the file (a reader never sees half). */
  private void save() {
    ObjectNode root = JSON.createObjectNode();
    root.put("nextId", nextId);
    ArrayNode gis = root.putArray("gpuInstances");
    for (Instance gi : instances) {
      ObjectNode n = gis.addObject();
      n.put("gpu", gi.gpu());
      n.put("id", gi.id());
      n.put("profileId", gi.profileId());
      n.put("start", gi.start());
      n.put("computeInstance", gi.computeInstance());
    }
    computeModes.forEach(root.putObject("computeModes")::put);
    timeSlices.forEach(root.putObject("timeSlices")::put);
    mpsDaemons.forEach(root.putArray("mpsDaemons")::add);
    try {
      Files.createDirectories(stateFile.toAbsolutePath().getParent());
      Path next = stateFile.resolveSibling(stateFile.getFileName() + ".next");
      JSON.writerWithDefaultPrettyPrinter().writeValue(next.toFile(), root);
      Files.move(
          next, stateFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the simulated GPU state " + stateFile, e);
    }
  }

  /** What outlives a driver process: not its MPS daemons. */
  private void load(JsonNode root) {
    nextId = root.path("nextId").asInt(1);
    for (JsonNode n : root.path("gpuInstances")) {
      instances.add(
          new Instance(
              n.path("gpu").asInt(),
              n.path("id").asInt(),
              n.path("profileId").asInt(),
              n.path("start").asInt(),
              n.path("computeInstance").asBoolean()));
    }
    root.path("computeModes")
        .fields()
        .forEachRemaining(e -> computeModes.put(e.getKey(), e.getValue().asText()));
    root.path("timeSlices")
        .fields()
        .forEachRemaining(e -> timeSlices.put(e.getKey(), e.getValue().asInt()));
  }
}
