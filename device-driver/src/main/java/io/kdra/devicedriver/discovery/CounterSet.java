package io.kdra.devicedriver.discovery;

import io.kdra.core.model.Quantity;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * A named set of counters that partitionable devices consume from (ResourceSlice sharedCounters).
 */
public record CounterSet(String name, Map<String, Quantity> counters) {
  public CounterSet {
    counters = Collections.unmodifiableMap(new TreeMap<>(counters));
  }
}
