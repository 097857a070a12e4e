package io.kdra.devicedriver.sharing;

import io.kdra.core.config.SharingConfig;
import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.prepare.DeviceSetup;
import io.kdra.devicedriver.prepare.PrepareException;
import io.kdra.devicedriver.sharing.CommandRunner.Command;
import io.kdra.devicedriver.sharing.CommandRunner.CommandException;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Applies the node's sharing strategy to a shared whole GPU ({@code allowMultipleAllocations}):
 *
 * <ul>
 *   <li>time-slicing: {@code nvidia-smi compute-policy -i <gpu> --set-timeslice=<n>} with the
 *       claim's interval ({@code Default}=0, {@code Short}=1, {@code Medium}=2, {@code Long}=3), on
 *       every prepare (the GPU has one setting: the latest claim's wins); back to 0 when the last
 *       claim on the GPU is unprepared;
 *   <li>MPS: one control daemon per GPU ({@code nvidia-cuda-mps-control -d} with {@code
 *       CUDA_VISIBLE_DEVICES} set to the GPU), its pipe and log directories under {@code
 *       <mps-root>/<device>/}, bound into the container at CUDA's default paths and named by {@code
 *       CUDA_MPS_PIPE_DIRECTORY} / {@code CUDA_MPS_LOG_DIRECTORY} in the CDI spec; without an MPS
 *       config in the claim, the client limits follow the allocator's accounting (active thread
 *       percentage = consumed shares / shares, pinned memory = consumed memory); the daemon is told
 *       to {@code quit} when the last claim on the GPU is unprepared.
 * </ul>
 *
 * Idempotent: a daemon is started only when this process has not started it and its control pipe
 * does not exist (a daemon from before a driver restart keeps running). Thread-safe.
 */
public final class GpuSharingSetup implements DeviceSetup {
  /** Where CUDA clients look for the MPS pipes and logs by default. */
  static final String CONTAINER_PIPE_DIR = "/tmp/nvidia-mps";

  static final String CONTAINER_LOG_DIR = "/var/log/nvidia-mps";

  private final SharingSettings settings;
  private final CommandRunner runner;
  private final String smiPath;
  private final String mpsControlPath;
  private final Set<String> mpsStarted = new HashSet<>();

  public GpuSharingSetup(
      SharingSettings settings, CommandRunner runner, String smiPath, String mpsControlPath) {
    this.settings = settings;
    this.runner = runner;
    this.smiPath = smiPath;
    this.mpsControlPath = mpsControlPath;
  }

  @Override
  public synchronized DeviceEdits prepare(Allocated a) throws PrepareException {
    NodeDevice d = a.device();
    if (!d.allowMultipleAllocations()) {
      return DeviceEdits.NONE;
    }
    return switch (settings.strategy()) {
      case EXCLUSIVE -> DeviceEdits.NONE;
      case TIME_SLICING -> {
        SharingConfig.Interval interval =
            a.sharing() instanceof SharingConfig.TimeSlicing t
                ? t.interval()
                : SharingConfig.Interval.Default;
        run(
            d,
            Command.of(
                smiPath, "compute-policy", "-i", gpu(d), "--set-timeslice=" + interval.ordinal()));
        yield DeviceEdits.NONE;
      }
      case MPS -> mps(a);
    };
  }

  @Override
  public synchronized void release(NodeDevice d, boolean lastUser) throws PrepareException {
    if (!d.allowMultipleAllocations() || !lastUser) {
      return;
    }
    switch (settings.strategy()) {
      case TIME_SLICING ->
          run(d, Command.of(smiPath, "compute-policy", "-i", gpu(d), "--set-timeslice=0"));
      case MPS -> {
        Path pipe = pipeDir(d);
        if (mpsStarted.contains(d.name()) || Files.exists(pipe.resolve("control"))) {
          run(
              d,
              new Command(
                  List.of(mpsControlPath),
                  Map.of("CUDA_MPS_PIPE_DIRECTORY", pipe.toString()),
                  "quit\n"));
          mpsStarted.remove(d.name());
        }
      }
      case EXCLUSIVE -> {}
    }
  }

  private DeviceEdits mps(Allocated a) throws PrepareException {
    NodeDevice d = a.device();
    Path pipe = pipeDir(d);
    Path log = settings.mpsRoot().resolve(d.name()).resolve("log");
    try {
      Files.createDirectories(pipe);
      Files.createDirectories(log);
    } catch (IOException e) {
      throw new PrepareException(
          "device " + d.name(),
          "cannot create the MPS directories under " + settings.mpsRoot() + ": " + e);
    }
    if (!mpsStarted.contains(d.name()) && !Files.exists(pipe.resolve("control"))) {
      run(
          d,
          new Command(
              List.of(mpsControlPath, "-d"),
              Map.of(
                  "CUDA_VISIBLE_DEVICES", gpu(d),
                  "CUDA_MPS_PIPE_DIRECTORY", pipe.toString(),
                  "CUDA_MPS_LOG_DIRECTORY", log.toString()),
              ""));
      mpsStarted.add(d.name());
    }
    List<String> env = new ArrayList<>();
    env.add("CUDA_MPS_PIPE_DIRECTORY=" + CONTAINER_PIPE_DIR);
    env.add("CUDA_MPS_LOG_DIRECTORY=" + CONTAINER_LOG_DIR);
    if (!(a.sharing() instanceof SharingConfig.Mps)) {
      Quantity shares = a.consumedCapacity().get(SharedGpus.SHARES);
      Quantity total = d.capacity().get(SharedGpus.SHARES);
      if (shares != null && total != null && total.sign() > 0) {
        int percent =
            shares
                .value()
                .multiply(BigDecimal.valueOf(100))
                .divide(total.value(), 0, RoundingMode.CEILING)
                .intValue();
        env.add("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + Math.min(100, Math.max(1, percent)));
      }
      Quantity memory = a.consumedCapacity().get("memory");
      if (memory != null) {
        long mib =
            memory
                .value()
                .divide(BigDecimal.valueOf(1024L * 1024L), 0, RoundingMode.CEILING)
                .longValueExact();
        env.add("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=" + mib + "M");
      }
    }
    return new DeviceEdits(
        env,
        List.of(),
        List.of(
            new Mount(pipe.toString(), CONTAINER_PIPE_DIR),
            new Mount(log.toString(), CONTAINER_LOG_DIR)));
  }

  private Path pipeDir(NodeDevice d) {
    return settings.mpsRoot().resolve(d.name()).resolve("pipe");
  }

  /** nvidia-smi and CUDA take a GPU's UUID (stable) or, failing that, its index. */
  static String gpu(NodeDevice d) {
    if (d.attributes().get("uuid") instanceof AttributeValue.StringValue s) {
      return s.value();
    }
    if (d.attributes().get("index") instanceof AttributeValue.IntValue i) {
      return Long.toString(i.value());
    }
    return d.name();
  }

  private void run(NodeDevice d, Command c) throws PrepareException {
    try {
      runner.run(c);
    } catch (CommandException e) {
      throw new PrepareException("device " + d.name(), e.getMessage());
    }
  }
}
