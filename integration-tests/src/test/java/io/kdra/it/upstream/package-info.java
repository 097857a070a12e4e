/**
 * The dra-alloc command line's two implementations, kdra's and upstream's allocator built from Go
 * ({@code UpstreamAlloc}), for the differential tests.
 */
package io.kdra.it.upstream;
