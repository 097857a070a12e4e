package io.kdra.core.testing;

import java.util.Random;

/**
 * The random streams a scenario is drawn from, one per profile, so that a richer profile adds
 * shapes without moving a single draw of the poorer one: the basic stream alone decides a basic
 * scenario, and every basic seed quoted in the docs replays as it was.
 */
final class DrawStreams {

  /** The basic profile's choices, present in every profile. */
  final Random basic;

  /** The extended profile's own choices (also the shared one's); null in the basic profile. */
  final Random extended;

  /** The shared profile's own choices; null in the others. */
  final Random shared;

  /** The alpha profile's own choices (1.37 alpha fields); null in the others. */
  final Random alpha;

  /** The newer profile's own choices (1.37 slice, device and node fields, gates); else null. */
  final Random newer;

  DrawStreams(long seed, ScenarioGenerator.Profile profile) {
    this.basic = new Random(seed);
    this.extended =
        profile != ScenarioGenerator.Profile.BASIC ? new Random(seed ^ 0x9E3779B97F4A7C15L) : null;
    this.shared =
        profile == ScenarioGenerator.Profile.SHARED ? new Random(seed ^ 0xC2B2AE3D27D4EB4FL) : null;
    this.alpha =
        profile == ScenarioGenerator.Profile.ALPHA ? new Random(seed ^ 0x165667B19E3779F9L) : null;
    this.newer =
        profile == ScenarioGenerator.Profile.NEWER ? new Random(seed ^ 0x27D4EB2F165667C5L) : null;
  }

  /** True with probability 1/n in the alpha profile; never (and no draw) in the others. */
  boolean alphaOneIn(int n) {
    return alpha != null && alpha.nextInt(n) == 0;
  }

  /** True with probability 1/n in the extended profile; never (and no draw) in the basic one. */
  boolean extendedOneIn(int n) {
    return extended != null && extended.nextInt(n) == 0;
  }
}
