package io.kdra.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The end-to-end plot, from a results.csv as bin/bench-scheduling writes it. */
class SchedulingPlotTest {

  private static final String HEADER =
      "side,nodes,pods,workload,round,bound,create_seconds,seconds,pods_per_s,p50_ms,p99_ms,"
          + "cpu_ms_per_pod,api_requests_per_pod,heap_after_gc_mib,load_mean,load_max,"
          + "process_cpu_ms,process_rss_peak_mib,problems,notes";

  private static String row(String side, int nodes, String workload, int bound, double rate) {
    return String.join(
        ",",
        side,
        Integer.toString(nodes),
        "200",
        workload,
        "1",
        Integer.toString(bound),
        "1.00",
        "9.00",
        Double.toString(rate),
        "100,900,50.0,7.00,80,2.00,3.00",
        "claim-controller=900 kube-apiserver=800",
        "claim-controller=200/300",
        "\"a problem, with a comma\"",
        "\"\"");
  }

  @Test
  void meansAreBySideThenWorkloadAndSizeInTheFilesOrder() {
    Map<String, Map<String, Double>> means =
        SchedulingPlot.means(
            List.of(
                HEADER,
                row("upstream", 100, "single-gpu", 200, 10),
                row("ours", 100, "single-gpu", 200, 30),
                row("ours", 100, "single-gpu", 200, 40),
                row("ours", 500, "pcie-4gpu", 200, 20),
                row("upstream", 100, "single-gpu", 200, 12)));

    assertThat(means.keySet()).containsExactly("upstream", "ours");
    assertThat(means.get("ours"))
        .containsExactly(
            Map.entry("single-gpu, 100 nodes", 35.0), Map.entry("pcie-4gpu, 500 nodes", 20.0));
    assertThat(means.get("upstream")).containsExactly(Map.entry("single-gpu, 100 nodes", 11.0));
  }

  private static final String HEADER_WITH_PHASES =
      "side,nodes,pods,workload,phase,round,bound,create_seconds,seconds,pods_per_s,p50_ms,p99_ms,"
          + "cpu_ms_per_pod,api_requests_per_pod,heap_after_gc_mib,load_mean,load_max,"
          + "process_cpu_ms,process_rss_peak_mib,wave_pods,wave_bound,wave_p50_ms,wave_p90_ms,"
          + "wave_p99_ms,wave_cpu_ms_per_pod,problems,notes";

  private static String row(
      String side, int nodes, String workload, String phase, int bound, double rate) {
    return String.join(
        ",",
        side,
        Integer.toString(nodes),
        "200",
        workload,
        phase,
        "1",
        Integer.toString(bound),
        "1.00",
        "9.00",
        Double.toString(rate),
        "100,900,50.0,7.00,80,2.00,3.00",
        "claim-controller=900 kube-apiserver=800",
        "claim-controller=200/300",
        phase.equals("cold") && workload.equals("churn") ? "18,18,120,340,980,35.0" : ",,,,,",
        "\"a problem, with a comma\"",
        "\"\"");
  }

  @Test
  void eachPhaseIsACategoryOfItsOwnAndColdKeepsThePlainName() {
    Map<String, Map<String, Double>> means =
        SchedulingPlot.means(
            List.of(
                HEADER_WITH_PHASES,
                row("ours", 100, "single", "cold", 200, 30),
                row("ours", 100, "single", "warm", 200, 60),
                row("ours", 100, "single", "cold", 200, 40),
                row("ours", 100, "churn", "cold", 200, 20),
                row("upstream", 100, "single", "warm", 200, 12)));

    assertThat(means.get("ours"))
        .containsExactly(
            Map.entry("single, 100 nodes", 35.0),
            Map.entry("single (warm), 100 nodes", 60.0),
            Map.entry("churn, 100 nodes", 20.0));
    assertThat(means.get("upstream")).containsExactly(Map.entry("single (warm), 100 nodes", 12.0));
  }

  @Test
  void aRoundThatLeftPodsUnboundIsNotPlotted() {
    Map<String, Map<String, Double>> means =
        SchedulingPlot.means(
            List.of(
                HEADER,
                row("ours", 1000, "single-gpu", 200, 50),
                row("ours", 1000, "single-gpu", 150, 1)));

    assertThat(means.get("ours")).containsExactly(Map.entry("single-gpu, 1000 nodes", 50.0));
  }

  @Test
  void drawsAPngOfBothSides(@TempDir Path dir) throws Exception {
    Path png = dir.resolve("plot.png");
    SchedulingPlot.write(
        Map.of(
            "ours", Map.of("single-gpu, 100 nodes", 30.0),
            "upstream", Map.of("single-gpu, 100 nodes", 10.0)),
        png);

    BufferedImage image = ImageIO.read(png.toFile());
    assertThat(image.getWidth()).isEqualTo(900);
    assertThat(image.getHeight()).isEqualTo(520);
    // both series' colours are drawn: the bars
    assertThat(hasColour(image, 0x1f77b4)).isTrue();
    assertThat(hasColour(image, 0x8c8c8c)).isTrue();
  }

  private static boolean hasColour(BufferedImage image, int rgb) {
    for (int x = 0; x < image.getWidth(); x++) {
      for (int y = 0; y < image.getHeight(); y++) {
        if ((image.getRGB(x, y) & 0xffffff) == rgb) {
          return true;
        }
      }
    }
    return false;
  }
}
