/**
 * The scheduler for pods that name this controller, cut as kube-scheduler's DynamicResources plugin
 * and framework are, so that an upstream change maps to one class here. {@code PodScheduling} runs
 * one attempt in upstream's order:
 *
 * <ul>
 *   <li>claims from templates: {@code TemplateClaimController} (kube-controller-manager's
 *       resourceclaim controller, own mode only); {@code BoundPodClaims} (its reservations for pods
 *       bound without a scheduler);
 *   <li>PreEnqueue: {@code PreEnqueue}; PreFilter: {@code PreFilter}, which makes the attempt's
 *       {@code CycleState}, and {@code ExtendedPreFilter};
 *   <li>the scheduling cycle ({@code schedule_one.go}), under one lock: {@code SchedulingCycle}
 *       reads the pod's claims again (upstream's PreFilter reads them inside its one cycle; ours
 *       runs before the lock), runs {@code Filter} (nodes, then the allocation), {@code Score} and
 *       {@code Reserve} (Reserve and Unreserve), and comes to a {@code Decided};
 *   <li>the binding cycle, outside the lock: {@code BindingCycle} runs {@code PreBind}, then Bind;
 *   <li>PostFilter: {@code Preemption} (DefaultPreemption), called by the reconciler.
 * </ul>
 *
 * <p>Extended resources (upstream's {@code extendeddynamicresources.go}) have their own path:
 * {@code ExtendedPreFilter}, {@code ExtendedResources} (filter and allocation), {@code
 * ExtendedClaimWrites} (the special claim's writes). {@code DraManager} holds what upstream's
 * {@code dra_manager.go} does: the assume cache ({@code RecentWrites}), the allocated devices
 * ({@code AllocatedClaims}, {@code allocateddevices.go}) and the claim lookup over both; {@code
 * UnansweredSettle} (with the pure {@code UnansweredDecision}) settles the assumptions whose write
 * the API server never answered when no pod attempt does. Gangs (upstream's GangScheduling plugin)
 * are {@code GangScheduling}: the group's members and their claims ({@code GangMembers}), the
 * all-or-nothing pass under the lock ({@code GangPass}, with {@code GangRefusals} for its messages)
 * and the members' writes after it ({@code GangWrites}). Tracing ({@code AttemptSpans}) sits around
 * the phases, not in them.
 */
package io.kdra.claimcontroller.scheduling;
