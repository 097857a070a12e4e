package io.kdra.slicepublisher.grpc;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

/** A clock that tests move by hand, and a timer whose actions run when the clock passes them. */
final class FakeTime extends Clock implements DriverAuthenticator.Timer {
  private Instant now;
  private final List<Task> tasks = new ArrayList<>();

  FakeTime(Instant start) {
    this.now = start;
  }

  /** Moves the clock and runs the actions that became due, in their order. */
  void advance(Duration d) {
    List<Task> due;
    synchronized (this) {
      now = now.plus(d);
      due =
          tasks.stream()
              .filter(t -> !t.at.isAfter(now))
              .sorted((a, b) -> a.at.compareTo(b.at))
              .toList();
      tasks.removeAll(due);
    }
    due.forEach(t -> t.action.run());
  }

  synchronized int pending() {
    return tasks.size();
  }

  @Override
  public synchronized Runnable schedule(Duration delay, Runnable action) {
    Task t = new Task(now.plus(delay), action);
    tasks.add(t);
    return () -> {
      synchronized (this) {
        tasks.remove(t);
      }
    };
  }

  @Override
  public synchronized Instant instant() {
    return now;
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  private record Task(Instant at, Runnable action) {}
}
