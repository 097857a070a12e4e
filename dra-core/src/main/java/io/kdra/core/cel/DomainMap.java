package io.kdra.core.cel;

import java.util.AbstractMap;
import java.util.Map;
import java.util.Set;

/**
 * {@code device.attributes} and {@code device.capacity}: a map from domain to a map of values where
 * looking up a domain the device does not have yields an empty map instead of an error, as
 * upstream's {@code stringInterfaceMapWithDefault} does. {@code "x" in device.attributes} still
 * says false: the selector environment binds {@code in} to {@link #containsKey}, which only knows
 * the real domains.
 */
final class DomainMap extends AbstractMap<String, Map<String, Object>> {

  private final Map<String, Map<String, Object>> domains;

  DomainMap(Map<String, Map<String, Object>> domains) {
    this.domains = domains;
  }

  Map<String, Map<String, Object>> domains() {
    return domains;
  }

  @Override
  public Map<String, Object> get(Object key) {
    Map<String, Object> values = domains.get(key);
    return values != null ? values : Map.of();
  }

  @Override
  public boolean containsKey(Object key) {
    return domains.containsKey(key);
  }

  @Override
  public Set<Entry<String, Map<String, Object>>> entrySet() {
    return domains.entrySet();
  }

  @Override
  public int size() {
    return domains.size();
  }
}
