package io.kdra.devicedriver.sharing;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.devicedriver.sharing.CommandRunner.Command;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimulatedNvidiaSmiTest {

  @TempDir Path dir;

  private static Command mps(Path pipe, String input) {
    return new Command(
        List.of("nvidia-cuda-mps-control"),
        Map.of(SimulatedNvidiaSmi.PIPE_VARIABLE, pipe.toString()),
        input);
  }

  @Test
  void remembersComputeModesAndTimeSliceIntervals() {
    SimulatedNvidiaSmi smi = new SimulatedNvidiaSmi();
    assertThat(smi.apply(Command.of("nvidia-smi", "-i", "GPU-a", "-c", "EXCLUSIVE_PROCESS")).ok())
        .isTrue();
    smi.apply(Command.of("nvidia-smi", "compute-policy", "-i", "GPU-b", "--set-timeslice", "2"));
    smi.apply(Command.of("nvidia-smi", "-i", "GPU-b", "-c", "DEFAULT"));

    assertThat(smi.computeModes())
        .isEqualTo(Map.of("GPU-a", "EXCLUSIVE_PROCESS", "GPU-b", "DEFAULT"));
    assertThat(smi.timeSlices()).isEqualTo(Map.of("GPU-b", 2));
  }

  @Test
  void aStateFileKeepsTheGpuAcrossDriverProcessesButNotItsMpsDaemons() throws Exception {
    Path state = dir.resolve("gpus.json");
    Path pipe = dir.resolve("mps/gpu-1/pipe");
    SimulatedNvidiaSmi first = SimulatedNvidiaSmi.persistedIn(state);
    first.apply(Command.of("nvidia-smi", "mig", "-i", "0", "-cgi", "9:4", "-C"));
    first.apply(Command.of("nvidia-smi", "-i", "GPU-b", "-c", "EXCLUSIVE_PROCESS"));
    first.apply(Command.of("nvidia-smi", "compute-policy", "-i", "GPU-c", "--set-timeslice", "3"));
    first.apply(mps(pipe, ""));
    assertThat(
            first
                .apply(
                    new Command(
                        List.of("nvidia-cuda-mps-control", "-d"),
                        Map.of(SimulatedNvidiaSmi.PIPE_VARIABLE, pipe.toString()),
                        ""))
                .ok())
        .isTrue();
    assertThat(Files.readString(state)).contains(pipe.toString());

    // the driver process died; the next one finds the GPU as the first left it
    SimulatedNvidiaSmi next = SimulatedNvidiaSmi.persistedIn(state);

    assertThat(next.gpuInstances()).containsExactly("0:9:4");
    assertThat(next.computeModes()).isEqualTo(Map.of("GPU-b", "EXCLUSIVE_PROCESS"));
    assertThat(next.timeSlices()).isEqualTo(Map.of("GPU-c", 3));
    assertThat(next.mpsDaemons()).as("died with the driver").isEmpty();
    assertThat(next.apply(mps(pipe, "get_server_list\n")).ok()).isFalse();
    // a new instance does not reuse the id of the one that is there
    assertThat(next.apply(Command.of("nvidia-smi", "mig", "-i", "0", "-cgi", "19:0", "-C")).text())
        .contains("GPU instance ID  2 ");
    assertThat(SimulatedNvidiaSmi.persistedIn(state).gpuInstances())
        .containsExactly("0:19:0", "0:9:4");
  }

  @Test
  void withoutAStateFileEveryDriverProcessStartsWithABlankGpu() {
    SimulatedNvidiaSmi first = new SimulatedNvidiaSmi();
    first.apply(Command.of("nvidia-smi", "mig", "-i", "0", "-cgi", "9:4", "-C"));
    assertThat(first.gpuInstances()).containsExactly("0:9:4");
    assertThat(new SimulatedNvidiaSmi().gpuInstances()).isEmpty();
    assertThat(Files.exists(dir.resolve("gpus.json"))).isFalse();
  }
}
