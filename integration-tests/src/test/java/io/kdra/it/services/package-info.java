/**
 * A kdra stack for one test class, the API a new scenario reads first: {@code KdraStack} (the JUnit
 * extension) starts a {@code Stack} (the four services, its nodes, its namespace), and {@code Dra}
 * builds claims, templates and pods and reads them back.
 */
package io.kdra.it.services;
