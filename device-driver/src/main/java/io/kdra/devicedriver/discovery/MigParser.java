package io.kdra.devicedriver.discovery;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses the tables {@code nvidia-smi mig} prints: GPU instance profiles ({@code -lgip}), their
 * possible placements ({@code -lgipp}), existing GPU instances ({@code -lgi}) and compute instances
 * ({@code -lci}), and the confirmation lines of {@code -cgi} / {@code -cci}. Pure.
 *
 * <p>A row that looks like a table row for a GPU ({@code | 0 MIG ...}) but does not have the
 * expected columns is an error naming the line: partitions must never be published from a guess.
 * "No MIG-enabled devices found" and "No GPU instances found" are empty results.
 */
public final class MigParser {
  private static final Pattern PROFILE =
      Pattern.compile(
          "^\\|\\s+(\\d+)\\s+MIG\\s+(\\S+)\\s+(\\d+)\\s+(\\d+)/(\\d+)\\s+([\\d.]+)\\s+(\\S+)"
              + "\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+\\|$");
  private static final Pattern PROFILE_2ND =
      Pattern.compile("^\\|\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+\\|$");
  private static final Pattern PLACEMENT =
      Pattern.compile(
          "^GPU\\s+(\\d+)\\s+Profile ID\\s+(\\d+)\\s+Placements?\\s*:\\s*\\{([\\d,\\s]+)\\}:(\\d+)$");
  private static final Pattern GPU_INSTANCE =
      Pattern.compile(
          "^\\|\\s+(\\d+)\\s+MIG\\s+(\\S+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+):(\\d+)\\s+\\|$");
  private static final Pattern COMPUTE_INSTANCE =
      Pattern.compile(
          "^\\|\\s+(\\d+)\\s+(\\d+)\\s+MIG\\s+(\\S+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+):(\\d+)\\s+\\|$");
  private static final Pattern GPU_ROW = Pattern.compile("^\\|\\s+\\d+\\s+(\\d+\\s+)?MIG\\s.*");
  private static final Pattern CREATED_GI =
      Pattern.compile("Successfully created GPU instance ID\\s+(\\d+)");
  private static final Pattern CREATED_CI =
      Pattern.compile("Successfully created compute instance ID\\s+(\\d+)");

  private MigParser() {}

  /**
   * One GPU instance profile of one GPU (a {@code -lgip} row pair).
   *
   * @param gpu the GPU index
   * @param name e.g. {@code 3g.40gb}
   * @param id the profile id {@code -cgi} takes
   * @param memoryGiB as printed (two decimals)
   */
  public record Profile(
      int gpu,
      String name,
      int id,
      int free,
      int total,
      BigDecimal memoryGiB,
      int multiprocessors,
      int decoders,
      int encoders,
      int copyEngines,
      int jpegEngines,
      int ofaEngines) {}

  /** Where instances of a profile may start, in memory slices, and how many they span. */
  public record Placements(int gpu, int profileId, List<Integer> starts, int size) {
    public Placements {
      starts = List.copyOf(starts);
    }
  }

  /** An existing GPU instance. */
  public record GpuInstance(int gpu, String profile, int profileId, int id, int start, int size) {}

  /** An existing compute instance inside a GPU instance. */
  public record ComputeInstance(int gpu, int gpuInstance, String profile, int profileId, int id) {}

  public static List<Profile> profiles(String lgip) throws DiscoveryException {
    List<Profile> out = new ArrayList<>();
    String[] lines = lgip.split("\\R");
    for (int n = 0; n < lines.length; n++) {
      String line = lines[n].strip();
      Matcher m = PROFILE.matcher(line);
      if (m.matches()) {
        Matcher second = n + 1 < lines.length ? PROFILE_2ND.matcher(lines[n + 1].strip()) : null;
        if (second == null || !second.matches()) {
          throw error(
              "-lgip",
              n + 2,
              "expected the CE, JPEG and OFA columns of "
                  + m.group(2)
                  + ", got: "
                  + (n + 1 < lines.length ? lines[n + 1].strip() : "end"));
        }
        out.add(
            new Profile(
                i(m, 1),
                m.group(2),
                i(m, 3),
                i(m, 4),
                i(m, 5),
                new BigDecimal(m.group(6)),
                i(m, 8),
                i(m, 9),
                i(m, 10),
                i(second, 1),
                i(second, 2),
                i(second, 3)));
        n++;
      } else if (GPU_ROW.matcher(line).matches()) {
        throw error("-lgip", n + 1, "not a GPU instance profile row: " + line);
      }
    }
    return out;
  }

  public static List<Placements> placements(String lgipp) throws DiscoveryException {
    List<Placements> out = new ArrayList<>();
    String[] lines = lgipp.split("\\R");
    for (int n = 0; n < lines.length; n++) {
      String line = lines[n].strip();
      if (line.isEmpty() || line.startsWith("No ")) {
        continue;
      }
      Matcher m = PLACEMENT.matcher(line);
      if (!m.matches()) {
        throw error("-lgipp", n + 1, "not a placement line: " + line);
      }
      List<Integer> starts = new ArrayList<>();
      for (String s : m.group(3).split(",")) {
        starts.add(Integer.parseInt(s.strip()));
      }
      out.add(new Placements(i(m, 1), i(m, 2), starts, i(m, 4)));
    }
    return out;
  }

  public static List<GpuInstance> gpuInstances(String lgi) throws DiscoveryException {
    List<GpuInstance> out = new ArrayList<>();
    String[] lines = lgi.split("\\R");
    for (int n = 0; n < lines.length; n++) {
      String line = lines[n].strip();
      Matcher m = GPU_INSTANCE.matcher(line);
      if (m.matches()) {
        out.add(new GpuInstance(i(m, 1), m.group(2), i(m, 3), i(m, 4), i(m, 5), i(m, 6)));
      } else if (GPU_ROW.matcher(line).matches()) {
        throw error("-lgi", n + 1, "not a GPU instance row: " + line);
      }
    }
    return out;
  }

  public static List<ComputeInstance> computeInstances(String lci) throws DiscoveryException {
    List<ComputeInstance> out = new ArrayList<>();
    String[] lines = lci.split("\\R");
    for (int n = 0; n < lines.length; n++) {
      String line = lines[n].strip();
      Matcher m = COMPUTE_INSTANCE.matcher(line);
      if (m.matches()) {
        out.add(new ComputeInstance(i(m, 1), i(m, 2), m.group(3), i(m, 4), i(m, 5)));
      } else if (GPU_ROW.matcher(line).matches()) {
        throw error("-lci", n + 1, "not a compute instance row: " + line);
      }
    }
    return out;
  }

  /** The id of the GPU instance {@code -cgi} reports it created. */
  public static OptionalInt createdGpuInstance(String output) {
    Matcher m = CREATED_GI.matcher(output);
    return m.find() ? OptionalInt.of(Integer.parseInt(m.group(1))) : OptionalInt.empty();
  }

  /** The id of the compute instance {@code -cgi -C} or {@code -cci} reports it created. */
  public static OptionalInt createdComputeInstance(String output) {
    Matcher m = CREATED_CI.matcher(output);
    return m.find() ? OptionalInt.of(Integer.parseInt(m.group(1))) : OptionalInt.empty();
  }

  private static int i(Matcher m, int group) {
    return Integer.parseInt(m.group(group));
  }

  private static DiscoveryException error(String command, int line, String problem) {
    return new DiscoveryException("nvidia-smi mig " + command + " line " + line + ": " + problem);
  }
}
