package io.kdra.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The pure side of the chaos soak's sharing nodes ({@link SoakSharing}): what a node's simulated
 * GPUs must hold for the claims its driver's checkpoint has prepared, and the geometry of the MIG
 * partitions of an A100-40GB (which placements overlap, which are free).
 */
final class SoakGpus {

  private static final ObjectMapper JSON = new ObjectMapper();

  private SoakGpus() {}

  /** The node's sharing strategy for its whole GPUs. */
  enum Strategy {
    TIME_SLICING,
    MPS
  }

  /**
   * A sharing node's GPUs as nvidia-smi and the MPS daemons know them.
   *
   * @param sharedGpus each shared whole GPU's device name to its uuid ({@code nvidia-smi -i})
   * @param mpsPipes each shared whole GPU's device name to its MPS pipe directory
   */
  record Node(Strategy strategy, Map<String, String> sharedGpus, Map<String, String> mpsPipes) {}

  /**
   * One device of a claim prepared on the node, as its checkpoint entry has it.
   *
   * @param interval the time-slice interval the claim's config named for it, if any
   */
  record Use(String claim, String device, boolean admin, Optional<String> interval) {}

  /** What a node's simulated GPUs hold: the driver's state file. */
  record State(
      Set<String> gpuInstances,
      Map<String, String> computeModes,
      Map<String, Integer> timeSlices,
      Set<String> mpsDaemons) {

    static State read(Path file) {
      if (!Files.exists(file)) {
        return new State(Set.of(), Map.of(), Map.of(), Set.of());
      }
      JsonNode root;
      try {
        root = JSON.readTree(Files.readString(file));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Set<String> instances = new TreeSet<>();
      for (JsonNode gi : root.path("gpuInstances")) {
        instances.add(
            gi.path("gpu").asInt()
                + ":"
                + gi.path("profileId").asInt()
                + ":"
                + gi.path("start").asInt()
                + (gi.path("computeInstance").asBoolean() ? "" : " (no compute instance)"));
      }
      Map<String, String> modes = new TreeMap<>();
      root.path("computeModes")
          .fields()
          .forEachRemaining(e -> modes.put(e.getKey(), e.getValue().asText()));
      Map<String, Integer> slices = new TreeMap<>();
      root.path("timeSlices")
          .fields()
          .forEachRemaining(e -> slices.put(e.getKey(), e.getValue().asInt()));
      Set<String> daemons = new TreeSet<>();
      root.path("mpsDaemons").forEach(d -> daemons.add(d.asText()));
      return new State(instances, modes, slices, daemons);
    }
  }

  /**
   * The devices of {@code pool} in a checkpoint's prepared claims, each with the adminAccess mark
   * and the time-slice interval its CDI spec carries ({@code KDRA_DEVICE_<n>=<device>} beside
   * {@code KDRA_DEVICE_<n>_ADMIN_ACCESS=true} and {@code KDRA_DEVICE_<n>_TIMESLICE_INTERVAL}, as
   * the driver reads them back).
   */
  static List<Use> uses(JsonNode checkpoint, String pool) {
    List<Use> out = new ArrayList<>();
    for (var it = checkpoint.path("preparedClaims").fields(); it.hasNext(); ) {
      var claim = it.next();
      Map<String, String> env = new TreeMap<>();
      try {
        for (JsonNode device :
            JSON.readTree(claim.getValue().path("cdiSpec").asText("{}")).path("devices")) {
          for (JsonNode e : device.path("containerEdits").path("env")) {
            String text = e.asText();
            int eq = text.indexOf('=');
            if (eq > 0) {
              env.put(text.substring(0, eq), text.substring(eq + 1));
            }
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      for (JsonNode d : claim.getValue().path("devices")) {
        if (!pool.equals(d.path("poolName").asText())) {
          continue;
        }
        String device = d.path("deviceName").asText();
        String variable =
            env.entrySet().stream()
                .filter(
                    e -> e.getKey().matches("KDRA_DEVICE_[0-9]+") && e.getValue().equals(device))
                .map(Map.Entry::getKey)
                .findFirst()
                .orElse("");
        out.add(
            new Use(
                claim.getKey(),
                device,
                "true".equals(env.get(variable + "_ADMIN_ACCESS")),
                Optional.ofNullable(env.get(variable + "_TIMESLICE_INTERVAL"))));
      }
    }
    return out;
  }

  /** The interval names of {@code SharingConfig.Interval}, in the order nvidia-smi numbers them. */
  static final List<String> INTERVALS = List.of("Default", "Short", "Medium", "Long");

  /**
   * Where the node's GPUs differ from what its prepared claims imply (empty: none): a GPU instance
   * with a compute instance for each MIG partition that a claim holds other than by adminAccess,
   * and no other; on a shared GPU that such a claim holds, with MPS its control daemon and compute
   * mode {@code EXCLUSIVE_PROCESS}, with time-slicing compute mode {@code DEFAULT} and the interval
   * its claims named; on one that none holds, no daemon, compute mode {@code DEFAULT} (or never
   * set) and interval 0 (or never set). adminAccess claims set nothing up.
   */
  static List<String> mismatches(Node node, List<Use> uses, State state) {
    List<String> out = new ArrayList<>();
    Set<String> expectedInstances = new TreeSet<>();
    for (Use u : uses) {
      if (!u.admin()) {
        MigPartition.parse(u.device()).ifPresent(p -> expectedInstances.add(p.instance()));
      }
    }
    if (!expectedInstances.equals(state.gpuInstances())) {
      out.add(
          "MIG instances "
              + state.gpuInstances()
              + ", the prepared claims' partitions imply "
              + expectedInstances);
    }
    for (var gpu : node.sharedGpus().entrySet()) {
      String device = gpu.getKey();
      String uuid = gpu.getValue();
      List<Use> users = uses.stream().filter(u -> u.device().equals(device) && !u.admin()).toList();
      String mode = state.computeModes().get(uuid);
      boolean daemon = state.mpsDaemons().contains(node.mpsPipes().get(device));
      int slice = state.timeSlices().getOrDefault(uuid, 0);
      if (users.isEmpty()) {
        if (mode != null && !mode.equals("DEFAULT")) {
          out.add(device + ": compute mode " + mode + " with no claim on it");
        }
        if (daemon) {
          out.add(device + ": an MPS daemon with no claim on it");
        }
        if (slice != 0) {
          out.add(device + ": time slice " + slice + " with no claim on it");
        }
        continue;
      }
      List<String> claims = users.stream().map(Use::claim).toList();
      if (node.strategy() == Strategy.MPS) {
        if (!"EXCLUSIVE_PROCESS".equals(mode)) {
          out.add(device + ": compute mode " + mode + " under the MPS claims " + claims);
        }
        if (!daemon) {
          out.add(device + ": no MPS daemon for the claims " + claims);
        }
      } else {
        if (!"DEFAULT".equals(mode)) {
          out.add(device + ": compute mode " + mode + " under the time-sliced claims " + claims);
        }
        Set<String> named = new TreeSet<>();
        users.forEach(u -> u.interval().ifPresent(named::add));
        if (named.size() > 1) {
          out.add(device + ": claims " + claims + " prepared with intervals " + named);
        } else if (named.size() == 1 && INTERVALS.indexOf(named.iterator().next()) != slice) {
          out.add(device + ": time slice " + slice + ", its claims " + claims + " named " + named);
        }
        if (daemon) {
          out.add(device + ": an MPS daemon on a time-sliced GPU");
        }
      }
    }
    return out;
  }

  /**
   * A MIG partition of the soak's A100-40GB, from its device name ({@code gpu-<parent>-mig-<profile
   * without dots>-<placement start>}, as {@link io.kdra.it.nodes.SimulatedNode#migGpu} names them).
   */
  record MigPartition(int gpu, String profile, int start) {
    private static final Pattern NAME = Pattern.compile("gpu-(\\d+)-mig-(\\d)g(\\d+)gb-(\\d+)");

    /** Profile to {profile id, memory slices, allowed starts...}: NVIDIA's A100-40GB table. */
    private static final Map<String, int[]> PROFILES =
        Map.of(
            "1g.5gb", new int[] {19, 1, 0, 1, 2, 3, 4, 5, 6},
            "2g.10gb", new int[] {14, 2, 0, 2, 4},
            "3g.20gb", new int[] {9, 4, 0, 4},
            "4g.20gb", new int[] {5, 4, 0},
            "7g.40gb", new int[] {0, 8, 0});

    static Optional<MigPartition> parse(String device) {
      Matcher m = NAME.matcher(device);
      if (!m.matches()) {
        return Optional.empty();
      }
      String profile = m.group(2) + "g." + m.group(3) + "gb";
      if (!PROFILES.containsKey(profile)) {
        return Optional.empty();
      }
      return Optional.of(
          new MigPartition(Integer.parseInt(m.group(1)), profile, Integer.parseInt(m.group(4))));
    }

    /** Its device name. */
    String device() {
      return "gpu-" + gpu + "-mig-" + profile.replace(".", "") + "-" + start;
    }

    /** Its GPU instance as the simulated GPU lists them: {@code <gpu>:<profile id>:<start>}. */
    String instance() {
      return gpu + ":" + PROFILES.get(profile)[0] + ":" + start;
    }

    boolean overlaps(MigPartition other) {
      int size = PROFILES.get(profile)[1];
      int otherSize = PROFILES.get(other.profile)[1];
      return gpu == other.gpu && start < other.start + otherSize && other.start < start + size;
    }

    /** Every placement of {@code profile} on GPU {@code gpu}. */
    static List<MigPartition> placements(int gpu, String profile) {
      int[] p = PROFILES.get(profile);
      List<MigPartition> out = new ArrayList<>();
      for (int i = 2; i < p.length; i++) {
        out.add(new MigPartition(gpu, profile, p[i]));
      }
      return out;
    }
  }

  /** The pairs of {@code allocated} partitions that share a memory slice (none may). */
  static List<String> overlapping(List<MigPartition> allocated) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < allocated.size(); i++) {
      for (int j = i + 1; j < allocated.size(); j++) {
        if (allocated.get(i).overlaps(allocated.get(j))) {
          out.add(allocated.get(i).device() + " and " + allocated.get(j).device());
        }
      }
    }
    return out;
  }

  /**
   * The placements of {@code profile} on GPU {@code gpu} that are {@code published} (device names)
   * and overlap none of {@code allocated}: where a claim for one more such partition fits.
   */
  static List<String> freePlacements(
      int gpu, String profile, Set<String> published, List<MigPartition> allocated) {
    return MigPartition.placements(gpu, profile).stream()
        .filter(p -> published.contains(p.device()))
        .filter(p -> allocated.stream().noneMatch(p::overlaps))
        .map(MigPartition::device)
        .toList();
  }
}
