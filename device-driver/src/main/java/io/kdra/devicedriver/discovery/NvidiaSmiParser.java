package io.kdra.devicedriver.discovery;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Parses the output of {@code nvidia-smi --query-gpu=<QUERY> --format=csv,noheader,nounits}. Pure.
 *
 * <p>Robust to what real boxes print: {@code [N/A]}, {@code [Not Supported]} and the like mean
 * "unknown" (the attribute is left out, not guessed); {@code [Unknown Error]} or {@code [GPU is
 * lost]} in any field marks that GPU unhealthy; lines without fields that nvidia-smi prints for
 * GPUs it cannot open ("Unable to determine the device handle ...") become {@link Result#problems}.
 * A line with the wrong number of fields, or without a usable index or UUID, is an error naming the
 * line and field: devices must never be published under a guessed identity.
 */
public final class NvidiaSmiParser {
  /** The query, in the order the parser expects the columns. */
  public static final String QUERY =
      "index,uuid,name,pci.bus_id,memory.total,driver_version,compute_cap,mig.mode.current";

  private static final String[] FIELDS = QUERY.split(",");
  private static final Set<String> UNKNOWN =
      Set.of("", "N/A", "[N/A]", "[Not Supported]", "[Insufficient Permissions]", "[Unknown]");
  private static final Set<String> BROKEN =
      Set.of("[Unknown Error]", "[GPU is lost]", "[GPU requires reset]");

  private NvidiaSmiParser() {}

  /**
   * One GPU row. Optional fields are empty when nvidia-smi did not know them.
   *
   * @param problem why the GPU is unhealthy, empty if it is fine
   */
  public record SmiGpu(
      int index,
      String uuid,
      Optional<String> name,
      Optional<String> pciBusId,
      OptionalLong memoryMiB,
      Optional<String> driverVersion,
      Optional<String> computeCapability,
      Optional<Boolean> migEnabled,
      String problem) {}

  /** The GPUs, and lines that could not be tied to one (logged, not fatal). */
  public record Result(List<SmiGpu> gpus, List<String> problems) {}

  /**
   * @throws DiscoveryException naming the line (1-based) and field of malformed output
   */
  public static Result parse(String output) throws DiscoveryException {
    List<SmiGpu> gpus = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    String[] lines = output.split("\\R");
    for (int n = 0; n < lines.length; n++) {
      String line = lines[n].strip();
      if (line.isEmpty()) {
        continue;
      }
      String[] cols = line.split(",", -1);
      if (cols.length == 1) {
        problems.add("nvidia-smi line " + (n + 1) + ": " + line);
        continue;
      }
      if (cols.length != FIELDS.length) {
        throw new DiscoveryException(
            "nvidia-smi line "
                + (n + 1)
                + ": expected "
                + FIELDS.length
                + " fields ("
                + QUERY
                + "), got "
                + cols.length
                + ": "
                + line);
      }
      for (int i = 0; i < cols.length; i++) {
        cols[i] = cols[i].strip();
      }
      gpus.add(gpu(cols, n + 1));
    }
    return new Result(gpus, problems);
  }

  private static SmiGpu gpu(String[] c, int line) throws DiscoveryException {
    List<String> broken = new ArrayList<>();
    for (int i = 0; i < c.length; i++) {
      if (BROKEN.contains(c[i])) {
        broken.add(FIELDS[i] + " " + c[i]);
      }
    }
    OptionalInt index = integer(c[0]);
    if (index.isEmpty()) {
      throw new DiscoveryException(
          "nvidia-smi line " + line + ": field index: \"" + c[0] + "\" is not a GPU index");
    }
    String uuid = value(c[1]).orElse("");
    if (!uuid.startsWith("GPU-")) {
      throw new DiscoveryException(
          "nvidia-smi line " + line + ": field uuid: \"" + c[1] + "\" is not a GPU UUID");
    }
    OptionalInt mem = integer(c[4]);
    Optional<String> mig = value(c[7]);
    return new SmiGpu(
        index.getAsInt(),
        uuid,
        value(c[2]),
        value(c[3]),
        mem.isPresent() ? OptionalLong.of(mem.getAsInt()) : OptionalLong.empty(),
        value(c[5]),
        value(c[6]),
        mig.map(m -> m.equalsIgnoreCase("Enabled")),
        String.join(", ", broken));
  }

  private static Optional<String> value(String s) {
    return UNKNOWN.contains(s) || BROKEN.contains(s) ? Optional.empty() : Optional.of(s);
  }

  private static OptionalInt integer(String s) {
    try {
      return value(s).map(v -> OptionalInt.of(Integer.parseInt(v))).orElse(OptionalInt.empty());
    } catch (NumberFormatException e) {
      return OptionalInt.empty();
    }
  }
}
