/**
 * What the rest of the harness stands on: child processes ({@code ServiceProcess}) and short
 * commands ({@code Commands}), free ports, records of what a killed run left behind ({@code
 * Leftovers}), owner-only and temporary files, and an OTLP trace receiver. Its classes use no other
 * harness package.
 */
package io.kdra.it.support;
