package io.kdra.devicedriver.config;

import io.kdra.config.RenamedPrefix;
import jakarta.annotation.Priority;

/**
 * Properties still set under this service's old prefix {@code driver.*} answer for {@code
 * kdra.device-driver.*}, with a WARN per key, for one release ({@link RenamedPrefix}). Registered
 * in META-INF/services/io.smallrye.config.ConfigSourceInterceptor.
 */
@Priority(RenamedPrefix.PRIORITY)
public class OldDriverPrefix extends RenamedPrefix {

  public OldDriverPrefix() {
    super("driver", "kdra.device-driver");
  }
}
