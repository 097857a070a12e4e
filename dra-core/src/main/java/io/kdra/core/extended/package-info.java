/**
 * Extended resources served by DRA (KEP-5004, {@code DRAExtendedResource}, beta and on in 1.36):
 * which DeviceClass serves an extended resource name ({@link
 * io.kdra.core.extended.ExtendedResourceClasses}, upstream's {@code ExtendedResourceCache}), what a
 * pod asks for ({@link io.kdra.core.extended.ExtendedResourceRequests}), which of those a node
 * serves by DRA rather than by a device plugin ({@link io.kdra.core.extended.ExtendedResourceFit},
 * kube-scheduler's {@code filterExtendedResources} and the noderesources fit), and the special
 * claim that carries them ({@link io.kdra.core.extended.ExtendedResourceClaims}, upstream's {@code
 * createRequestsAndMappings}). Pure: no I/O, no clocks.
 */
package io.kdra.core.extended;
