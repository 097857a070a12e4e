package io.kdra.alloc.cli;

/** Bad input: the message names the file, the object and the field. Exit status 2. */
public final class InputException extends Exception {

  InputException(String message, Throwable cause) {
    super(message, cause);
  }
}
