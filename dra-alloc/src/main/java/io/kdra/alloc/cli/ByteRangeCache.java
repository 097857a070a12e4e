package io.kdra.alloc.cli;

import java.util.Arrays;

/**
 * A small direct-mapped cache from short byte ranges to values: a YAML dump repeats the same keys
 * and many of the same values thousands of times, and this turns each repeat into a hash and a
 * compare instead of a new string (and, for values, another type resolution).
 */
final class ByteRangeCache<V> {

  private static final int SLOTS = 4096;
  private static final int MAX_LENGTH = 64;

  private final byte[][] keys = new byte[SLOTS][];
  private final Object[] values = new Object[SLOTS];

  /** The value cached for {@code in[from, to)}, or null. */
  @SuppressWarnings("unchecked")
  V get(byte[] in, int from, int to) {
    if (to - from > MAX_LENGTH) {
      return null;
    }
    int slot = slot(in, from, to);
    byte[] key = keys[slot];
    return key != null && Arrays.equals(key, 0, key.length, in, from, to) ? (V) values[slot] : null;
  }

  /** Caches {@code value} for {@code in[from, to)}, replacing what shared its slot. */
  void put(byte[] in, int from, int to, V value) {
    if (to - from > MAX_LENGTH) {
      return;
    }
    int slot = slot(in, from, to);
    keys[slot] = Arrays.copyOfRange(in, from, to);
    values[slot] = value;
  }

  private static int slot(byte[] in, int from, int to) {
    int h = 1;
    for (int i = from; i < to; i++) {
      h = 31 * h + in[i];
    }
    return (h ^ (h >>> 12)) & (SLOTS - 1);
  }
}
