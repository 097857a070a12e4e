/**
 * The structured allocator: which devices would claims get on a node, decided as upstream's {@code
 * k8s.io/dynamic-resource-allocation/structured} allocator of Kubernetes 1.36 decides, and why not
 * when they cannot be allocated.
 *
 * <p>Entry points: {@link io.kdra.core.alloc.Allocator} (one node, a pod's claims together), {@link
 * io.kdra.core.alloc.PodScheduler} (first node in name order where a pod's claims fit), {@link
 * io.kdra.core.alloc.Explanation} (structured reasons with a one-line summary). Inputs are an
 * {@link io.kdra.core.alloc.AllocationSnapshot} (slices, a {@link
 * io.kdra.core.alloc.DeviceClassLister}, the {@link io.kdra.core.alloc.AllocatedState}) and {@link
 * io.kdra.core.alloc.AllocatorOptions} (features, selector evaluator, share-ID source, step
 * budget). Pure: no I/O, no clocks, no randomness of its own.
 *
 * <p>Internals, one concern per class: pools ({@code PoolGatherer}, {@code Pool}), request
 * preparation ({@code ClaimPlan}, {@code RequestSpec}), the search ({@code Search}), constraints
 * ({@code Constraint}), counters ({@code Counters}), consumable capacity ({@code Capacity}), taints
 * ({@code Taints}), results ({@code ResultBuilder}), explanations ({@code Diagnoser}).
 */
package io.kdra.core.alloc;
