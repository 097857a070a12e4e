package io.kdra.core.alloc;

/**
 * When a pod's search must give up, asked cooperatively: {@link PodScheduler} asks before each node
 * and the search every {@link #CHECK_EVERY} steps, so a passed deadline stops it within that many
 * steps. The allocator reads no clock of its own; the caller's deadline does (a test passes one
 * that passes after a number of questions).
 */
@FunctionalInterface
public interface Deadline {

  /** How many search steps go by between two questions: cheap against one clock read. */
  int CHECK_EVERY = 256;

  /** A deadline that never passes: the search is bounded by its step budget alone. */
  Deadline NONE = () -> false;

  /** Whether the deadline has passed. */
  boolean passed();
}
