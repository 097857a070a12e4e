package io.kdra.core.cel.corpus;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The CEL corpus both differential checks run: the hand-picked expressions on every device of
 * {@link CelDevices}, a seeded generated corpus (expression {@code i} on device {@code i mod n}),
 * and the sample of each known divergence on the first device. The live check ({@code
 * CelDifferentialIT}) sends it to upstream; the golden check ({@code CelGoldenTest}) reads
 * upstream's answers from the golden file written from that run.
 */
public final class CelCorpus {

  /** The build's generated corpus: seed (6, 7 and 8 were run with 3,000 to 20,000). */
  public static final long DEFAULT_SEED = 7;

  /** The build's generated corpus: size. */
  public static final int DEFAULT_SIZE = 3000;

  public static final String HAND_PICKED = "hand-picked";
  public static final String GENERATED = "generated";
  public static final String DIVERGENCE_SAMPLES = "divergence-samples";

  /**
   * One expression on one device.
   *
   * @param corpus {@link #HAND_PICKED}, {@link #GENERATED} or {@link #DIVERGENCE_SAMPLES}
   * @param device an index into {@link CelDevices#all()}
   */
  public record Case(String corpus, String expression, int device) {
    public String deviceName() {
      return CelDevices.all().get(device).getName();
    }
  }

  private CelCorpus() {}

  /** Every hand-picked expression on every device, expression by expression. */
  public static List<Case> handPicked() {
    List<Case> cases = new ArrayList<>();
    for (String e : CelHandPickedCases.EXPRESSIONS) {
      for (int d = 0; d < CelDevices.all().size(); d++) {
        cases.add(new Case(HAND_PICKED, e, d));
      }
    }
    return cases;
  }

  /** {@code size} distinct generated expressions of {@code seed}, each on one device in turn. */
  public static List<Case> generated(long seed, int size) {
    CelExpressionGenerator generator = new CelExpressionGenerator(seed);
    Set<String> expressions = new LinkedHashSet<>();
    for (int i = 0; i < size * 20 && expressions.size() < size; i++) {
      expressions.add(generator.next());
    }
    List<Case> cases = new ArrayList<>();
    int i = 0;
    for (String e : expressions) {
      cases.add(new Case(GENERATED, e, i++ % CelDevices.all().size()));
    }
    return cases;
  }

  /** The sample of each {@link CelKnownDivergences} entry, in its order, on the first device. */
  public static List<Case> divergenceSamples() {
    return CelKnownDivergences.ALL.stream()
        .map(d -> new Case(DIVERGENCE_SAMPLES, d.sample(), 0))
        .toList();
  }

  /** What the golden file holds: hand-picked, the default generated corpus, the samples. */
  public static List<Case> golden() {
    List<Case> all = new ArrayList<>(handPicked());
    all.addAll(generated(DEFAULT_SEED, DEFAULT_SIZE));
    all.addAll(divergenceSamples());
    return all;
  }
}
