/**
 * {@code bin/demo}: a local stack with simulated GPUs, the demo manifests applied, and a report of
 * where each pod went.
 */
package io.kdra.it.demo;
