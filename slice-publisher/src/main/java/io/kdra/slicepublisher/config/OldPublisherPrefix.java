package io.kdra.slicepublisher.config;

import io.kdra.config.RenamedPrefix;
import jakarta.annotation.Priority;

/**
 * Properties still set under this service's old prefix {@code publisher.*} answer for {@code
 * kdra.slice-publisher.*}, with a WARN per key, for one release ({@link RenamedPrefix}). Registered
 * in META-INF/services/io.smallrye.config.ConfigSourceInterceptor.
 */
@Priority(RenamedPrefix.PRIORITY)
public class OldPublisherPrefix extends RenamedPrefix {

  public OldPublisherPrefix() {
    super("publisher", "kdra.slice-publisher");
  }
}
