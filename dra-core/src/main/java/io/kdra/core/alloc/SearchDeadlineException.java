package io.kdra.core.alloc;

/** The pod's {@link Deadline} passed during the search: it stops without an answer. */
final class SearchDeadlineException extends RuntimeException {

  SearchDeadlineException() {
    super("search exceeded its deadline", null, false, false);
  }
}
