package io.kdra.core.golden;

import static org.assertj.core.api.Assertions.assertThat;

import io.kdra.core.cel.CelDevice;
import io.kdra.core.cel.DeviceSelectorEnvironment;
import io.kdra.core.cel.corpus.CelAgreement;
import io.kdra.core.cel.corpus.CelCorpus;
import io.kdra.core.cel.corpus.CelDevices;
import io.kdra.core.cel.corpus.CelKnownDivergences;
import io.kdra.core.cel.corpus.CelOutcome;
import java.util.HashMap;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Our CEL against upstream's, without Go: every case of the golden corpus (upstream's outcomes,
 * written by {@code CelDifferentialIT}) must have our outcome and estimated cost, as in the live
 * differential test. A case the golden file lacks, or a changed device, fails until the file is
 * regenerated.
 */
class CelGoldenTest {

  private static final GoldenFiles.Content GOLDEN = GoldenFiles.readResource(CelGolden.FILE);

  @Test
  void goldenFileHoldsTheCorpus() {
    assertThat(CelGolden.cases(GOLDEN))
        .as(
            "the golden file's cases are CelCorpus.golden(); regenerate: %s",
            GoldenFiles.REGENERATE)
        .isEqualTo(CelCorpus.golden());
    GoldenFiles.normalized(new GoldenFiles.Content(CelGolden.header(GOLDEN.oracle()), List.of()))
        .header()
        .fields()
        .forEachRemaining(
            f ->
                assertThat(GOLDEN.header().path(f.getKey()))
                    .as("header %s; regenerate: %s", f.getKey(), GoldenFiles.REGENERATE)
                    .isEqualTo(f.getValue()));
  }

  @Test
  void ourOutcomesAndCostsAreUpstreams() {
    CelAgreement.Result r =
        CelAgreement.compare(
            "golden",
            CelGolden.cases(GOLDEN),
            CelGolden.outcomes(GOLDEN),
            DeviceSelectorEnvironment.create(),
            true);
    System.out.println(r.summary());
    assertThat(r.mismatches())
        .as("expressions where kdra and the golden upstream outcome disagree")
        .isEmpty();
  }

  /** Each known divergence still shows on its sample: remove it from the list once fixed. */
  @Test
  void knownDivergencesStillDiverge() {
    List<CelCorpus.Case> cases = CelGolden.cases(GOLDEN);
    List<CelOutcome> upstream = CelGolden.outcomes(GOLDEN);
    DeviceSelectorEnvironment env = DeviceSelectorEnvironment.create();
    CelDevice device = CelDevice.of(CelDevices.DRIVER, CelDevices.all().get(0));
    for (CelKnownDivergences.Divergence d : CelKnownDivergences.ALL) {
      int i = cases.indexOf(new CelCorpus.Case(CelCorpus.DIVERGENCE_SAMPLES, d.sample(), 0));
      assertThat(i).as("%s's sample in the golden file", d.name()).isNotNegative();
      CelOutcome ours = CelOutcome.ours(env, d.sample(), device, new HashMap<>());
      assertThat(ours.outcome())
          .as(
              "%s: %s no longer diverges (upstream %s, kdra %s)",
              d.name(), d.sample(), upstream.get(i).summary(), ours.summary())
          .isNotEqualTo(upstream.get(i).outcome());
      assertThat(d.matches(d.sample(), upstream.get(i).summary(), ours.summary()))
          .as("%s matches its own sample", d.name())
          .isTrue();
    }
  }
}
