package io.kdra.devicedriver.sharing;

import io.kdra.devicedriver.sharing.CommandRunner.Command;
import io.kdra.devicedriver.sharing.CommandRunner.Output;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Answers the {@code nvidia-smi mig} commands of {@link MigSetup} as a GPU would, keeping the GPU
 * and compute instances in memory: the answers of the {@link RecordingCommandRunner} on simulated
 * hardware, so that dynamic MIG goes through create, find and destroy there too. Output has the
 * shape the real tool prints (the same parser reads it). Anything else succeeds silently.
 * Thread-safe through the runner, which answers one command at a time.
 */
public final class SimulatedNvidiaSmi implements Function<Command, Output> {
  private record Instance(int gpu, int id, int profileId, int start, boolean computeInstance) {}

  private final List<Instance> instances = new ArrayList<>();
  private int nextId = 1;

  @Override
  public Output apply(Command c) {
    List<String> a = c.argv();
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
}
