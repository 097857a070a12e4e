package io.kdra.benchmarks;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * The PNG of docs/dev/benchmarks.md's end-to-end section: pods bound per second, ours and
 * upstream's, by workload and size, the mean of each run's rounds, from the {@code results.csv}
 * that {@code bin/bench-scheduling} writes. Drawn headless with JFreeChart.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.kdra.benchmarks.SchedulingPlot \
 *   integration-tests/target/bench-scheduling/&lt;run&gt;/results.csv docs/scheduling-throughput.png
 * </pre>
 */
public final class SchedulingPlot {

  private SchedulingPlot() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: SchedulingPlot <results.csv> <out.png>");
      System.exit(2);
    }
    write(means(Files.readAllLines(Path.of(args[0]))), Path.of(args[1]));
  }

  /**
   * Mean pods/s by side, then "workload, nodes" (in the file's order), of the rows whose every pod
   * was bound; a phase other than {@code cold} is a category of its own, "workload (phase), nodes"
   * (files from before the phases have no {@code phase} column: their runs were cold). The columns
   * read (side ... pods_per_s) come before the quoted ones.
   */
  static Map<String, Map<String, Double>> means(List<String> csv) {
    List<String> header = List.of(csv.get(0).split(","));
    int side = header.indexOf("side");
    int nodes = header.indexOf("nodes");
    int pods = header.indexOf("pods");
    int workload = header.indexOf("workload");
    int bound = header.indexOf("bound");
    int rate = header.indexOf("pods_per_s");
    int phase = header.indexOf("phase");
    Map<String, Map<String, List<Double>>> samples = new LinkedHashMap<>();
    for (String line : csv.subList(1, csv.size())) {
      String[] f = line.split(",", rate + 2);
      if (f.length <= rate || !f[bound].equals(f[pods])) {
        continue;
      }
      String phaseText = phase < 0 || f[phase].equals("cold") ? "" : " (" + f[phase] + ")";
      String category = f[workload] + phaseText + ", " + f[nodes] + " nodes";
      samples
          .computeIfAbsent(f[side], k -> new LinkedHashMap<>())
          .computeIfAbsent(category, k -> new ArrayList<>())
          .add(Double.parseDouble(f[rate]));
    }
    Map<String, Map<String, Double>> means = new LinkedHashMap<>();
    samples.forEach(
        (s, byCategory) -> {
          Map<String, Double> m = new LinkedHashMap<>();
          byCategory.forEach(
              (c, v) -> m.put(c, v.stream().mapToDouble(Double::doubleValue).average().orElse(0)));
          means.put(s, m);
        });
    return means;
  }

  static void write(Map<String, Map<String, Double>> means, Path png) throws IOException {
    System.setProperty("java.awt.headless", "true");
    DefaultCategoryDataset data = new DefaultCategoryDataset();
    means.forEach(
        (side, byCategory) ->
            byCategory.forEach(
                (category, v) ->
                    data.addValue(
                        v,
                        side.equals("ours")
                            ? "kdra claim-controller"
                            : "kube-scheduler + kube-controller-manager",
                        category)));
    JFreeChart chart =
        ChartFactory.createBarChart(
            "End to end: pods bound per second (one run, mean of its rounds)",
            "workload, cluster size (8 GPUs per node, 2 pods per node)",
            "pods bound per second",
            data,
            PlotOrientation.VERTICAL,
            true,
            false,
            false);
    CategoryPlot plot = chart.getCategoryPlot();
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    plot.getDomainAxis().setMaximumCategoryLabelLines(2);
    BarRenderer renderer = (BarRenderer) plot.getRenderer();
    renderer.setBarPainter(new StandardBarPainter());
    renderer.setShadowVisible(false);
    for (int i = 0; i < data.getRowCount(); i++) {
      boolean ours = data.getRowKey(i).toString().startsWith("kdra");
      renderer.setSeriesPaint(i, ours ? new Color(0x1f77b4) : new Color(0x8c8c8c));
    }
    chart.setBackgroundPaint(Color.WHITE);
    ChartUtils.saveChartAsPNG(png.toFile(), chart, 900, 520);
  }
}
