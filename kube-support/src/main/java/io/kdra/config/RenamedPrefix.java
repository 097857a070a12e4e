package io.kdra.config;

import io.smallrye.config.ConfigSourceInterceptor;
import io.smallrye.config.ConfigSourceInterceptorContext;
import io.smallrye.config.ConfigValue;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * One release of compatibility for a service whose properties moved under {@code kdra.<service>}: a
 * property still set under its old prefix ({@code driver.node-name}, {@code DRIVER_NODE_NAME})
 * answers for the new name when the new name is not set, and the first read of each such key logs
 * one WARN naming the old and the new key. Old names are also listed under the new prefix, so that
 * map-valued properties ({@code network-pools.<pool>...}) find their keys. The chart writes the new
 * names only; this is for people who start the jars with their own properties.
 *
 * <p>Each service registers a subclass with a no-argument constructor as a {@link
 * ConfigSourceInterceptor} service (ServiceLoader), at a priority between SmallRye's expression and
 * profile interceptors, so that {@code %prod.driver.x} and {@code ${...}} in an old value still
 * work.
 */
public class RenamedPrefix implements ConfigSourceInterceptor {

  private static final Logger LOG = Logger.getLogger(RenamedPrefix.class);

  /** Between SmallRye's profile (Priorities.LIBRARY + 200) and expression (+ 800) interceptors. */
  public static final int PRIORITY = 3000 + 600;

  private final String oldPrefix;
  private final String newPrefix;
  private final Consumer<String> warn;
  private final Set<String> warned = ConcurrentHashMap.newKeySet();

  /** Old and new prefix without the trailing dot: {@code "driver", "kdra.device-driver"}. */
  protected RenamedPrefix(String oldPrefix, String newPrefix) {
    this(oldPrefix, newPrefix, LOG::warn);
  }

  RenamedPrefix(String oldPrefix, String newPrefix, Consumer<String> warn) {
    this.oldPrefix = oldPrefix + ".";
    this.newPrefix = newPrefix + ".";
    this.warn = warn;
  }

  @Override
  public ConfigValue getValue(ConfigSourceInterceptorContext context, String name) {
    ConfigValue value = context.proceed(name);
    if (!name.startsWith(newPrefix)) {
      return value;
    }
    String old = oldPrefix + name.substring(newPrefix.length());
    ConfigValue legacy = context.proceed(old);
    // the new name wins where both are set in one source or the new one in a stronger source;
    // the old one wins over the new one's default (the defaults' source is the weakest)
    if (legacy == null
        || value != null && value.getConfigSourceOrdinal() >= legacy.getConfigSourceOrdinal()) {
      return value;
    }
    if (warned.add(old)) {
      warn.accept(
          old + " is deprecated and will stop working in the next release: rename it " + name);
    }
    return legacy.withName(name);
  }

  @Override
  public Iterator<String> iterateNames(ConfigSourceInterceptorContext context) {
    Set<String> names = new LinkedHashSet<>();
    for (Iterator<String> it = context.iterateNames(); it.hasNext(); ) {
      String name = it.next();
      names.add(name);
      if (name.startsWith(oldPrefix)) {
        names.add(newPrefix + name.substring(oldPrefix.length()));
      }
    }
    return names.iterator();
  }
}
