package io.kdra.computeclassbridge.config;

import io.kdra.config.RenamedPrefix;
import jakarta.annotation.Priority;

/**
 * Properties still set under this service's old prefix {@code bridge.*} answer for {@code
 * kdra.computeclass-bridge.*}, with a WARN per key, for one release ({@link RenamedPrefix}).
 * Registered in META-INF/services/io.smallrye.config.ConfigSourceInterceptor.
 */
@Priority(RenamedPrefix.PRIORITY)
public class OldBridgePrefix extends RenamedPrefix {

  public OldBridgePrefix() {
    super("bridge", "kdra.computeclass-bridge");
  }
}
