package io.kdra.devicedriver.prepare;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A file of the node's state could not be written: names what it was and where, with the kernel's
 * cause (typically "No space left on device"), so that the claim's error tells an operator which
 * disk to look at. Its {@link #toString} is its message: it reaches the kubelet's event as is.
 */
public final class FileWriteException extends IOException {

  /**
   * @param what what the file is to the driver, e.g. "CDI spec"
   */
  public FileWriteException(String what, Path file, IOException cause) {
    super("cannot write the " + what + " " + file + ": " + reason(cause), cause);
  }

  private static String reason(IOException cause) {
    if (cause instanceof FileWriteException) {
      return cause.getMessage();
    }
    String message = cause.getMessage();
    return message == null || message.isBlank() ? cause.getClass().getSimpleName() : message;
  }

  @Override
  public String toString() {
    return getMessage();
  }
}
