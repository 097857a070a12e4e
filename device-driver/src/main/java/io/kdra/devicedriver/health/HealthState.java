package io.kdra.devicedriver.health;

/** A device's health as the kubelet's DRAResourceHealth API knows it (upstream's HealthStatus). */
public enum HealthState {
  /** The health cannot be determined now (e.g. the last discovery pass failed). */
  UNKNOWN,
  HEALTHY,
  UNHEALTHY
}
