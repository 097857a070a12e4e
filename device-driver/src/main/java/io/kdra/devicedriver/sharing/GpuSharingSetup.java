package io.kdra.devicedriver.sharing;

import io.kdra.core.config.SharingConfig;
import io.kdra.core.model.AttributeValue;
import io.kdra.core.model.Quantity;
import io.kdra.devicedriver.discovery.NodeDevice;
import io.kdra.devicedriver.prepare.DeviceSetup;
import io.kdra.devicedriver.prepare.PrepareException;
import io.kdra.devicedriver.prepare.PreparedClaim;
import io.kdra.devicedriver.sharing.CommandRunner.Command;
import io.kdra.devicedriver.sharing.CommandRunner.CommandException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Applies the node's sharing strategy to a shared whole GPU ({@code allowMultipleAllocations}):
 *
 * <ul>
 *   <li>time-slicing: the first claim on the GPU sets its compute mode to {@code DEFAULT} ({@code
 *       nvidia-smi -i <gpu> -c DEFAULT}, several processes at once) and its interval ({@code
 *       nvidia-smi compute-policy -i <gpu> --set-timeslice <n>}, {@code Default}=0, {@code
 *       Short}=1, {@code Medium}=2, {@code Long}=3). The interval is one setting of the GPU, not of
 *       a claim: a claim whose config names an interval other than the one a prepared claim on the
 *       GPU named is refused, naming that claim; a claim without a time-slicing config takes the
 *       GPU as it is. Back to 0 when the last claim on the GPU is unprepared;
 *   <li>MPS: the first claim sets the compute mode to {@code EXCLUSIVE_PROCESS} (only the MPS
 *       server holds a context, as NVIDIA's MPS guide advises) and starts one control daemon per
 *       GPU ({@code nvidia-cuda-mps-control -d} with {@code CUDA_VISIBLE_DEVICES} set to the GPU),
 *       its pipe and log directories under {@code <mps-root>/<device>/}, bound into the container
 *       at CUDA's default paths and named by {@code CUDA_MPS_PIPE_DIRECTORY} / {@code
 *       CUDA_MPS_LOG_DIRECTORY} in the CDI spec, and {@code <mps-root>/shm} bound at the
 *       container's {@code /dev/shm} (the daemons' shared memory, see {@link #CONTAINER_SHM_DIR});
 *       without an MPS config in the claim, the client limits follow the allocator's accounting
 *       (active thread percentage = consumed shares / shares, pinned memory = consumed memory), and
 *       the daemon enforces the largest share of the GPU's claims as its server limits ({@link
 *       MpsLimits}), which a client cannot raise; the daemon is told to {@code quit}, and the
 *       compute mode goes back to {@code DEFAULT}, when the last claim on the GPU is unprepared. A
 *       claim of a second namespace is refused while another namespace's MPS claims are prepared on
 *       the node, unless it allows that ({@link MpsTenancy}).
 * </ul>
 *
 * <p>Command lines as NVIDIA documents them and as NVIDIA's own DRA driver (k8s-dra-driver-gpu,
 * {@code nvlib.go} setTimeSlice / setComputeMode) runs them: {@code compute-policy} takes the value
 * of {@code --set-timeslice} as its own argument (its help: {@code [ | --set-timeslice]: Set
 * timeslice config for a GPU: 0=DEFAULT, 1=SHORT, 2=MEDIUM, 3=LONG}); the MPS daemon is started and
 * stopped as in NVIDIA's MPS guide ("Starting MPS control daemon": the three variables, then {@code
 * nvidia-cuda-mps-control -d}; {@code echo quit | nvidia-cuda-mps-control}).
 *
 * <p>Idempotent, and across driver restarts: a daemon answers {@code get_server_list} on its
 * control pipe, or is not there. The daemons are the driver container's children and usually die
 * with it, leaving their {@code control} socket file on the host path; each MPS prepare asks the
 * daemon again (one may die under a running driver: the old pod of a rolling update exits with the
 * daemon it started). A daemon found alive is adopted, a dead one's files are removed and a new
 * daemon started. At driver start ({@link #restore}) a GPU whose prepared claims use MPS gets its
 * daemon back, and a daemon no prepared claim uses is stopped. A last unprepare that finds no
 * daemon counts it as stopped. Thread-safe.
 */
public final class GpuSharingSetup implements DeviceSetup {
  /** Where CUDA clients look for the MPS pipes and logs by default. */
  static final String CONTAINER_PIPE_DIR = "/tmp/nvidia-mps";

  static final String CONTAINER_LOG_DIR = "/var/log/nvidia-mps";

  /**
   * MPS server and clients exchange shared memory through {@code /dev/shm}, which is private to
   * each container: clients get {@code <mps-root>/shm} there, the directory the chart mounts at the
   * driver container's (and so its daemons') {@code /dev/shm}, as NVIDIA's device plugin shares
   * {@code /run/nvidia/mps/shm}.
   */
  static final String CONTAINER_SHM_DIR = "/dev/shm";

  private final SharingSettings settings;
  private final CommandRunner runner;
  private final String smiPath;
  private final String mpsControlPath;
  // the GPUs whose MPS daemon this process started or found running; another driver process may
  // stop one (the other pod of a rolling update) and a daemon may die, so it is never trusted
  // alone: a prepare asks the daemon, a release tells one this process knows of to quit
  private final Set<String> mpsStarted = ConcurrentHashMap.newKeySet();

  public GpuSharingSetup(
      SharingSettings settings, CommandRunner runner, String smiPath, String mpsControlPath) {
    this.settings = settings;
    this.runner = runner;
    this.smiPath = smiPath;
    this.mpsControlPath = mpsControlPath;
  }

  @Override
  public boolean involves(NodeDevice d) {
    return d.allowMultipleAllocations()
        && settings.strategy() != SharingSettings.Strategy.EXCLUSIVE;
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
        timeSlice(a);
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
      case TIME_SLICING -> run(d, setTimeSlice(d, SharingConfig.Interval.Default));
      case MPS -> {
        if (mpsStarted.contains(d.name()) || Files.exists(control(d))) {
          stopDaemon(d);
          run(d, computeMode(d, "DEFAULT"));
        }
      }
      case EXCLUSIVE -> {}
    }
  }

  @Override
  public void forgetRemembered() {
    mpsStarted.clear();
  }

  private DeviceEdits mps(Allocated a) throws PrepareException {
    NodeDevice d = a.device();
    Optional<String> refused =
        MpsTenancy.refusal(a.claim(), a.otherClaims(), settings.mpsAcrossNamespaces());
    if (refused.isPresent()) {
      throw new PrepareException("device " + d.name(), refused.get());
    }
    Path pipe = pipeDir(d);
    Path log = logDir(d);
    Path shm = shmDir();
    try {
      Files.createDirectories(pipe);
      Files.createDirectories(log);
      Files.createDirectories(shm);
    } catch (IOException e) {
      throw new PrepareException(
          "device " + d.name(),
          "cannot create the MPS directories under " + settings.mpsRoot() + ": " + e);
    }
    // asked every time, not remembered: a daemon dies under a running driver when the old pod of
    // a rolling update exits with it, or when it crashes
    if (daemonRuns(d)) {
      mpsStarted.add(d.name()); // perhaps started by a previous driver process
    } else {
      startDaemon(d);
    }
    Quantity gpuMemory = d.capacity().get("memory");
    Quantity gpuShares = d.capacity().get(SharedGpus.SHARES);
    MpsLimits share = MpsLimits.ofShare(a.consumedCapacity(), gpuShares, gpuMemory);
    enforce(d, MpsLimits.ceiling(share, a.otherUsers(), gpuMemory));
    List<String> env = new ArrayList<>();
    env.add("CUDA_MPS_PIPE_DIRECTORY=" + CONTAINER_PIPE_DIR);
    env.add("CUDA_MPS_LOG_DIRECTORY=" + CONTAINER_LOG_DIR);
    if (!(a.sharing() instanceof SharingConfig.Mps)) {
      if (a.consumedCapacity().containsKey(SharedGpus.SHARES)
          && gpuShares != null
          && gpuShares.sign() > 0) {
        env.add("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + share.threadPercentage());
      }
      if (a.consumedCapacity().containsKey("memory")) {
        env.add("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=" + share.pinnedMemoryMib() + "M");
      }
    }
    // read back by the GPU's next claims (MpsLimits.ceiling)
    env.addAll(MpsLimits.env(share));
    return new DeviceEdits(
        env,
        List.of(),
        List.of(
            new Mount(pipe.toString(), CONTAINER_PIPE_DIR),
            new Mount(log.toString(), CONTAINER_LOG_DIR),
            new Mount(shm.toString(), CONTAINER_SHM_DIR)));
  }

  @Override
  public synchronized void restore(NodeDevice d, List<PreparedClaim> users)
      throws PrepareException {
    if (settings.strategy() != SharingSettings.Strategy.MPS || !d.allowMultipleAllocations()) {
      return;
    }
    boolean inUse = !users.isEmpty();
    boolean alive = daemonRuns(d);
    if (inUse) {
      if (alive) {
        mpsStarted.add(d.name());
      } else {
        startDaemon(d);
      }
      // claims prepared under another strategy (the node's was changed) got no MPS limits
      if (users.stream().anyMatch(MpsTenancy::usesMps)) {
        enforce(d, MpsLimits.ceiling(users, d.capacity().get("memory")));
      }
    } else if (alive) {
      stopDaemon(d);
      run(d, computeMode(d, "DEFAULT"));
    } else {
      removeStalePipe(d);
    }
  }

  /**
   * Makes the daemon enforce {@code limits} for every client: as its server defaults (servers it
   * starts from now on) and on each server it runs now (their new clients); a client's own
   * variables can only lower them. The GPU is device 0 for the daemon ({@code CUDA_VISIBLE_DEVICES}
   * names it alone).
   */
  private void enforce(NodeDevice d, MpsLimits limits) throws PrepareException {
    int percent = limits.threadPercentage();
    String memory = limits.pinnedMemoryMib() + "M";
    boolean memoryLimited = limits.pinnedMemoryMib() != Long.MAX_VALUE;
    run(d, mpsControl(d, "set_default_active_thread_percentage " + percent));
    if (memoryLimited) {
      run(d, mpsControl(d, "set_default_device_pinned_mem_limit 0 " + memory));
    }
    for (String server : servers(d)) {
      run(d, mpsControl(d, "set_active_thread_percentage " + server + " " + percent));
      if (memoryLimited) {
        run(d, mpsControl(d, "set_device_pinned_mem_limit " + server + " 0 " + memory));
      }
    }
  }

  /** The PIDs of the MPS servers the GPU's daemon runs ({@code get_server_list}, one a line). */
  private List<String> servers(NodeDevice d) throws PrepareException {
    try {
      return runner
          .run(mpsControl(d, "get_server_list"))
          .text()
          .lines()
          .map(String::strip)
          .filter(l -> l.matches("[0-9]+"))
          .toList();
    } catch (CommandException e) {
      throw new PrepareException("device " + d.name(), e.getMessage());
    }
  }

  /** Starts the GPU's control daemon, over the files a dead one left. */
  private void startDaemon(NodeDevice d) throws PrepareException {
    removeStalePipe(d);
    run(d, computeMode(d, "EXCLUSIVE_PROCESS"));
    run(
        d,
        new Command(
            List.of(mpsControlPath, "-d"),
            Map.of(
                "CUDA_VISIBLE_DEVICES", gpu(d),
                "CUDA_MPS_PIPE_DIRECTORY", pipeDir(d).toString(),
                "CUDA_MPS_LOG_DIRECTORY", logDir(d).toString()),
            ""));
    mpsStarted.add(d.name());
  }

  /**
   * Tells the daemon to quit; one that is not there (it died with a driver container) counts as
   * stopped, so that the last unprepare does not fail for good.
   */
  private void stopDaemon(NodeDevice d) throws PrepareException {
    try {
      run(d, mpsControl(d, "quit"));
    } catch (PrepareException e) {
      if (daemonAnswers(d)) {
        throw e;
      }
    }
    mpsStarted.remove(d.name());
    removeStalePipe(d);
  }

  /**
   * Whether the GPU's control daemon runs: it left its {@code control} socket file (or this process
   * started it) and answers there.
   */
  private boolean daemonRuns(NodeDevice d) {
    return (mpsStarted.contains(d.name()) || Files.exists(control(d))) && daemonAnswers(d);
  }

  /** Whether a control daemon answers on the GPU's pipe. */
  private boolean daemonAnswers(NodeDevice d) {
    try {
      runner.run(mpsControl(d, "get_server_list"));
      return true;
    } catch (CommandException e) {
      return false;
    }
  }

  private Command mpsControl(NodeDevice d, String input) {
    return new Command(
        List.of(mpsControlPath),
        Map.of("CUDA_MPS_PIPE_DIRECTORY", pipeDir(d).toString()),
        input + "\n");
  }

  /** Removes the control socket file of a daemon that is gone; a new one creates it again. */
  private void removeStalePipe(NodeDevice d) throws PrepareException {
    try {
      Files.deleteIfExists(control(d));
    } catch (IOException e) {
      throw new PrepareException(
          "device " + d.name(), "cannot remove the stale MPS control socket: " + e);
    }
  }

  private Path control(NodeDevice d) {
    return pipeDir(d).resolve("control");
  }

  private Path logDir(NodeDevice d) {
    return settings.mpsRoot().resolve(d.name()).resolve("log");
  }

  /**
   * The GPU's interval is the one its claims asked for; the first claim also makes the GPU
   * shareable between processes. A claim that asks for nothing, or for what is set, changes
   * nothing.
   */
  private void timeSlice(Allocated a) throws PrepareException {
    NodeDevice d = a.device();
    Optional<SharingConfig.Interval> asked =
        a.sharing() instanceof SharingConfig.TimeSlicing t
            ? Optional.of(t.interval())
            : Optional.empty();
    Optional<SharingConfig.Interval> held = Optional.empty();
    for (PreparedClaim other : a.otherUsers()) {
      Optional<SharingConfig.Interval> theirs = other.timeSliceInterval(d.name());
      if (theirs.isPresent() && asked.isPresent() && theirs.get() != asked.get()) {
        throw new PrepareException(
            a.configPath() + ".opaque.parameters.sharing.timeSlicing.interval",
            asked.get()
                + " differs from "
                + theirs.get()
                + ", the interval claim "
                + other.claim().namespace()
                + "/"
                + other.claim().name()
                + " (uid "
                + other.claim().uid()
                + ") set on device "
                + d.name()
                + ": the time-slice interval is one setting of the GPU, so claims sharing it"
                + " must agree; this claim waits until that one is unprepared (or leave out the"
                + " interval to take the GPU's)");
      }
      held = held.or(() -> theirs);
    }
    if (a.otherUsers().isEmpty()) {
      run(d, computeMode(d, "DEFAULT"));
      run(d, setTimeSlice(d, asked.orElse(SharingConfig.Interval.Default)));
    } else if (asked.isPresent() && held.isEmpty()) {
      run(d, setTimeSlice(d, asked.get()));
    }
  }

  private Command setTimeSlice(NodeDevice d, SharingConfig.Interval interval) {
    return Command.of(
        smiPath,
        "compute-policy",
        "-i",
        gpu(d),
        "--set-timeslice",
        Integer.toString(interval.ordinal()));
  }

  /** {@code nvidia-smi -i <gpu> -c <mode>}: DEFAULT, EXCLUSIVE_PROCESS or PROHIBITED. */
  private Command computeMode(NodeDevice d, String mode) {
    return Command.of(smiPath, "-i", gpu(d), "-c", mode);
  }

  /** One for all GPUs of the node, as in NVIDIA's device plugin. */
  private Path shmDir() {
    return settings.mpsRoot().resolve("shm");
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
