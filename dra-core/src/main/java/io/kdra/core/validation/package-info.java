/**
 * Validation of {@code resource.k8s.io/v1} objects with the rules and messages of the Kubernetes
 * API server (1.36): {@link io.kdra.core.validation.Names} for formats, {@link
 * io.kdra.core.validation.Limits} for sizes, and one validator per kind returning {@link
 * io.kdra.core.validation.ValidationError}s. Pure: no I/O, no CEL compilation.
 */
package io.kdra.core.validation;
