/**
 * What the rest of the harness stands on: child processes ({@code ServiceProcess}) and short
 * commands ({@code Commands}), free ports, records of what a killed run left behind ({@code
 * Leftovers}), owner-only and temporary files, an OTLP trace receiver, and a TCP proxy that tests
 * pause or cut ({@code PausableProxy}). Its classes use no other harness package.
 */
package io.kdra.it.support;
