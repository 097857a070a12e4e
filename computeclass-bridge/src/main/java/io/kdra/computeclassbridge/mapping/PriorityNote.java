package io.kdra.computeclassbridge.mapping;

/**
 * Why a priority did not become a subrequest.
 *
 * @param priority index in {@code spec.priorities}
 * @param message names the priority ({@code spec.priorities[1] (gpu nvidia-foo x1)}) and the
 *     reason, ready for a condition or an Event
 */
public record PriorityNote(int priority, String message) {}
