package io.kdra.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.List;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The PNG for docs/dev/benchmarks.md: claims/s against cluster size, both axes logarithmic, one
 * colour per workload, ours solid, upstream's dashed. Drawn headless with JFreeChart.
 */
final class ThroughputPlot {

  private static final Color[] COLORS = {
    new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0x9467bd)
  };

  private ThroughputPlot() {}

  /** A base-10 log axis with one labelled tick per decade, in plain numbers (1,000 not 10^3). */
  private static LogAxis decades(String label) {
    LogAxis axis = new LogAxis(label);
    axis.setBase(10);
    axis.setSmallestValue(0.1);
    axis.setTickUnit(new NumberTickUnit(1));
    axis.setMinorTickMarksVisible(true);
    axis.setNumberFormatOverride(new DecimalFormat("#,##0.#"));
    return axis;
  }

  static void write(List<UpstreamComparison.Row> rows, Path png) throws IOException {
    System.setProperty("java.awt.headless", "true");
    XYSeriesCollection data = new XYSeriesCollection();
    List<String> scenarios =
        rows.stream().map(UpstreamComparison.Row::scenario).distinct().toList();
    for (String s : scenarios) {
      XYSeries ours = new XYSeries("kdra (Java), " + s);
      XYSeries upstream = new XYSeries("upstream (Go), " + s);
      for (UpstreamComparison.Row r : rows) {
        if (r.scenario().equals(s)) {
          ours.add(r.nodes(), r.ours().claimsPerSecond());
          upstream.add(r.nodes(), r.upstream().claimsPerSecond());
        }
      }
      data.addSeries(ours);
      data.addSeries(upstream);
    }
    LogAxis x = decades("nodes (8 GPUs each)");
    double minNodes = rows.stream().mapToInt(UpstreamComparison.Row::nodes).min().orElse(10);
    double maxNodes = rows.stream().mapToInt(UpstreamComparison.Row::nodes).max().orElse(1000);
    x.setRange(minNodes / 1.5, maxNodes * 1.5);
    LogAxis y = decades("claims per second (one claim per pod, single thread)");
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
    for (int i = 0; i < scenarios.size(); i++) {
      Color c = COLORS[i % COLORS.length];
      renderer.setSeriesPaint(2 * i, c);
      renderer.setSeriesPaint(2 * i + 1, c);
      renderer.setSeriesStroke(2 * i, new BasicStroke(2.5f));
      renderer.setSeriesStroke(
          2 * i + 1,
          new BasicStroke(
              2.0f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {8f, 5f}, 0f));
    }
    XYPlot plot = new XYPlot(data, x, y, renderer);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    JFreeChart chart =
        new JFreeChart(
            "Allocator throughput: kdra vs upstream k8s.io/"
                + "dynamic-resource-allocation v0.36.3",
            JFreeChart.DEFAULT_TITLE_FONT,
            plot,
            true);
    chart.setBackgroundPaint(Color.WHITE);
    ChartUtils.saveChartAsPNG(png.toFile(), chart, 900, 560);
  }
}
