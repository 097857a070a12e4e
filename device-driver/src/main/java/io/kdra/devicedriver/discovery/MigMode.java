package io.kdra.devicedriver.discovery;

/** How the nvidia backend treats GPUs with MIG mode enabled. */
public enum MigMode {
  /** MIG-enabled GPUs are published as whole GPUs only (as before MIG support). */
  OFF,
  /**
   * The GPU instances an admin created are the devices; prepare uses them and never creates or
   * destroys any.
   */
  STATIC,
  /**
   * Every placement of every profile is a device, with the whole GPU as one more, all consuming the
   * GPU's shared counters; prepare creates the allocated instance and unprepare destroys it.
   */
  DYNAMIC
}
