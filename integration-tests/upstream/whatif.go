package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// features are the allocator features kube-scheduler 1.37 enables by default, computed as its
// DynamicResources plugin does (AllocatorFeatures in dynamicresources.go): DRAAdminAccess and
// DRAPrioritizedList (GA), DRADeviceTaints (GA), DRAPartitionableDevices, DRAConsumableCapacity,
// DRAFractionalCapacityRange and DRADeviceBindingConditions+DRAResourceClaimDeviceStatus (beta or
// GA, on). DRAListTypeAttributes, DRAOptionalNodeOperations, DRADerivedAttributes and
// DRADeviceCompatibilityGroups are alpha and off in 1.37.
var features = structured.Features{
	AdminAccess:             true,
	PrioritizedList:         true,
	PartitionableDevices:    true,
	DeviceTaints:            true,
	DeviceBindingAndStatus:  true,
	ConsumableCapacity:      true,
	FractionalCapacityRange: true,
}

// newCELCache is the scheduler plugin's cache: the 10 most recent compiled expressions.
func newCELCache() *cel.Cache {
	return cel.NewCache(10, cel.Features{EnableConsumableCapacity: true, EnableListTypeAttributes: false})
}

// classLister serves DeviceClasses from the input, with the API's NotFound for missing ones.
type classLister map[string]*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	out := make([]*resourceapi.DeviceClass, 0, len(l))
	for _, c := range l {
		out = append(out, c)
	}
	return out, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c, ok := l[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
}

// allocState is what the scheduler's claim tracker keeps up to date from informers: dedicated
// devices, shared device IDs and consumed capacity of all allocated claims
// (foreachAllocatedDevice in allocateddevices.go, consumable capacity on).
type allocState struct {
	devices  sets.Set[structured.DeviceID]
	shared   sets.Set[structured.SharedDeviceID]
	capacity structured.ConsumedCapacityCollection
}

func newAllocState() *allocState {
	return &allocState{devices: sets.New[structured.DeviceID](),
		shared: sets.New[structured.SharedDeviceID](), capacity: structured.NewConsumedCapacityCollection()}
}

func (s *allocState) add(allocation *resourceapi.AllocationResult) {
	if allocation == nil {
		return
	}
	for _, r := range allocation.Devices.Results {
		if r.AdminAccess != nil && *r.AdminAccess {
			continue
		}
		id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
		if r.ShareID != nil {
			s.shared.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
			if r.ConsumedCapacity != nil {
				s.capacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
			}
			continue
		}
		s.devices.Insert(id)
	}
}

// snapshot is what GatherAllocatedState hands the allocator in PreFilter: clones, so that the
// allocator never sees later changes.
func (s *allocState) snapshot() structured.AllocatedState {
	return structured.AllocatedState{AllocatedDevices: s.devices.Clone(),
		AllocatedSharedDeviceIDs: s.shared.Clone(), AggregatedCapacity: s.capacity.Clone()}
}

// cluster is the static part of a run: slices, classes, nodes in name order, the CEL cache.
type cluster struct {
	slices   []*resourceapi.ResourceSlice
	classes  classLister
	nodes    []*v1.Node
	celCache *cel.Cache
}

// claimSelectors are the node selectors of a pod's allocated claims, as the plugin's PreFilter
// keeps them (availableOnNodes): nodeaffinity.NewNodeSelector of status.allocation.nodeSelector;
// an allocation without one is usable everywhere and has none.
func claimSelectors(claims []*resourceapi.ResourceClaim) ([]*nodeaffinity.NodeSelector, error) {
	var out []*nodeaffinity.NodeSelector
	for _, c := range claims {
		if c.Status.Allocation == nil || c.Status.Allocation.NodeSelector == nil {
			continue
		}
		s, err := nodeaffinity.NewNodeSelector(c.Status.Allocation.NodeSelector)
		if err != nil {
			return nil, fmt.Errorf("claim %s: allocation's node selector: %w", key(c.ObjectMeta), err)
		}
		out = append(out, s)
	}
	return out, nil
}

// eligible: the pod may run on the node (podFits) and, as the plugin's Filter checks, every
// allocated claim's node selector matches it ("resourceclaim not available on the node").
func eligible(pod *v1.Pod, node *v1.Node, pinned []*nodeaffinity.NodeSelector) bool {
	if !podFits(pod, node) {
		return false
	}
	for _, s := range pinned {
		if !s.Match(node) {
			return false
		}
	}
	return true
}

// noMatchingNode is dra-alloc's message for a pod without an eligible node.
func noMatchingNode(nodes int, pinned bool) string {
	also := ""
	if pinned {
		also = " and the node selectors of its allocated claims"
	}
	return fmt.Sprintf("no node matches the pod's node name, node selector and required node affinity%s (%d %s)",
		also, nodes, plural(nodes, "node", "nodes"))
}

// placement is the outcome for one pod's claims: a node and one result per claim, or a reason.
type placement struct {
	node    string
	results []resourceapi.AllocationResult
	reason  string
}

// schedule places one pod's claims as dra-core's PodScheduler does, driving upstream's allocator
// as kube-scheduler's DynamicResources plugin does: one allocator per pod (PreFilter) over all
// slices and the allocated state, then Allocate per node (Filter), nodes in name order, skipping
// nodes the pod cannot run on. Without firstAvailable the first node that fits wins. With it, each
// fitting node is scored as the plugin's computeScore does (per request, 8 - index of the chosen
// subrequest); a node with the best possible score ends the search, otherwise the highest score
// among the first feasibleNodesToScore feasible nodes wins, ties going to the first in name order.
// claims are the pod's unallocated claims; pinned the node selectors of its allocated ones, which
// only nodes they match may use.
func schedule(ctx context.Context, c *cluster, state *allocState, pod *v1.Pod, claims []*resourceapi.ResourceClaim,
	pinned []*nodeaffinity.NodeSelector) placement {
	var eligibleNodes []*v1.Node
	for _, n := range c.nodes {
		if eligible(pod, n, pinned) {
			eligibleNodes = append(eligibleNodes, n)
		}
	}
	if len(eligibleNodes) == 0 {
		return placement{reason: noMatchingNode(len(c.nodes), len(pinned) > 0)}
	}
	allocator, err := structured.NewAllocator(ctx, features, state.snapshot(), c.classes, c.slices, c.celCache)
	if err != nil {
		return placement{reason: err.Error()}
	}
	bestPossible := maxScore(claims)
	enough := feasibleNodesToScore(len(eligibleNodes))
	var best *placement
	bestScore := int64(-1)
	feasible := 0
	var lastNodeErr error
	for _, node := range eligibleNodes {
		if best != nil && feasible >= enough {
			break
		}
		results, err := allocator.Allocate(ctx, node, claims)
		if err != nil {
			if errors.Is(err, structured.ErrFailedAllocationOnNode) {
				lastNodeErr = err
				continue
			}
			// Like the plugin's Filter: an error that is not specific to the node aborts the pod.
			return placement{reason: err.Error()}
		}
		if len(results) != len(claims) {
			continue
		}
		score := computeScore(claims, results)
		p := placement{node: node.Name, results: results}
		if score >= bestPossible {
			return p
		}
		feasible++
		if score > bestScore {
			best, bestScore = &p, score
		}
	}
	if best != nil {
		return *best
	}
	reason := fmt.Sprintf("cannot allocate all claims on any of %d %s", len(eligibleNodes), plural(len(eligibleNodes), "node", "nodes"))
	if lastNodeErr != nil {
		reason += ": " + lastNodeErr.Error()
	}
	return placement{reason: reason}
}

// computeScore is the plugin's Score for claims allocated in this cycle.
func computeScore(claims []*resourceapi.ResourceClaim, results []resourceapi.AllocationResult) int64 {
	var score int64
	for i, claim := range claims {
		chosen := sets.New[string]()
		for _, r := range results[i].Devices.Results {
			if strings.Contains(r.Request, "/") {
				chosen.Insert(r.Request)
			}
		}
		for _, req := range claim.Spec.Devices.Requests {
			for j, sub := range req.FirstAvailable {
				if chosen.Has(req.Name + "/" + sub.Name) {
					score += int64(resourceapi.FirstAvailableDeviceRequestMaxSize - j)
				}
			}
		}
	}
	return score
}

// maxScore is the score when every firstAvailable request gets its first subrequest.
func maxScore(claims []*resourceapi.ResourceClaim) int64 {
	var score int64
	for _, claim := range claims {
		for _, req := range claim.Spec.Devices.Requests {
			if len(req.FirstAvailable) > 0 {
				score += resourceapi.FirstAvailableDeviceRequestMaxSize
			}
		}
	}
	return score
}

// feasibleNodesToScore is kube-scheduler's adaptive percentageOfNodesToScore
// (numFeasibleNodesToFind), applied as PodScheduler applies it: to the nodes the pod may run on.
func feasibleNodesToScore(nodes int) int {
	if nodes < 100 {
		return nodes
	}
	percentage := max(5, 50-nodes/125)
	return max(100, nodes*percentage/100)
}

// podFits: spec.nodeName, spec.nodeSelector and required node affinity, with upstream's helper.
func podFits(pod *v1.Pod, node *v1.Node) bool {
	if pod == nil {
		return true
	}
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != node.Name {
		return false
	}
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	return err == nil && ok
}

// report is every pending claim (allocated or not) and one line per failure.
type report struct {
	claims   []*resourceapi.ResourceClaim
	failures []string
}

// whatIf allocates the pending claims pod by pod, then the claims no pod references, each
// allocation consuming devices for the next: dra-alloc's WhatIf, line by line. As kube-scheduler,
// a pod's claims that are allocated already (in the input, or for an earlier pod: a shared claim)
// are not allocated again, and their node selectors restrict the pod's node; a claim that an
// earlier pod failed to get is tried again with the next pod that uses it.
func whatIf(ctx context.Context, in *inputs, onlyNode string) report {
	var pending []*resourceapi.ResourceClaim
	byKey := map[string]*resourceapi.ResourceClaim{}
	state := newAllocState()
	for _, c := range in.claims {
		if _, seen := byKey[key(c.ObjectMeta)]; !seen {
			byKey[key(c.ObjectMeta)] = c
		}
		if c.Status.Allocation != nil {
			state.add(c.Status.Allocation)
		} else {
			pending = append(pending, c)
		}
	}
	c := newCluster(in, onlyNode)
	var failures []string
	referenced := sets.New[string]()
	for _, pod := range in.pods {
		claims, missing := podClaims(in, pod, byKey, &pending)
		for _, cl := range claims {
			referenced.Insert(key(cl.ObjectMeta))
		}
		if missing != "" {
			failures = append(failures, key(pod.ObjectMeta)+": cannot allocate: "+missing)
			continue
		}
		pinned, err := claimSelectors(claims)
		if err != nil {
			failures = append(failures, key(pod.ObjectMeta)+": cannot schedule: "+err.Error())
			continue
		}
		var todo []*resourceapi.ResourceClaim
		for _, cl := range claims {
			if cl.Status.Allocation == nil {
				todo = append(todo, cl)
			}
		}
		if len(todo) > 0 {
			failures = place(ctx, c, state, pod, todo, pinned, failures)
			continue
		}
		if len(claims) == 0 {
			continue
		}
		fits := false
		for _, n := range c.nodes {
			fits = fits || eligible(pod, n, pinned)
		}
		if !fits {
			failures = append(failures, key(pod.ObjectMeta)+": cannot schedule: "+noMatchingNode(len(c.nodes), len(pinned) > 0))
		}
	}
	for _, cl := range pending {
		if !referenced.Has(key(cl.ObjectMeta)) {
			failures = place(ctx, c, state, nil, []*resourceapi.ResourceClaim{cl}, nil, failures)
		}
	}
	return report{claims: pending, failures: failures}
}

func place(ctx context.Context, c *cluster, state *allocState, pod *v1.Pod, claims []*resourceapi.ResourceClaim,
	pinned []*nodeaffinity.NodeSelector, failures []string) []string {
	p := schedule(ctx, c, state, pod, claims, pinned)
	if p.node == "" {
		for _, cl := range claims {
			failures = append(failures, key(cl.ObjectMeta)+": cannot allocate: "+p.reason)
		}
		return failures
	}
	for i, cl := range claims {
		result := p.results[i]
		cl.Status.Allocation = &result
		state.add(&result)
	}
	return failures
}

// newCluster: the input's nodes, else one per node name the slices mention; filtered by --node;
// sorted by name as PodScheduler sorts them.
func newCluster(in *inputs, onlyNode string) *cluster {
	nodes := append([]*v1.Node(nil), in.nodes...)
	if len(nodes) == 0 {
		names := sets.New[string]()
		for _, s := range in.slices {
			if s.Spec.NodeName != nil && *s.Spec.NodeName != "" && s.Spec.Driver != "" && s.Spec.Pool.Name != "" {
				names.Insert(*s.Spec.NodeName)
			}
		}
		if onlyNode != "" {
			names.Insert(onlyNode)
		}
		if names.Len() == 0 {
			names.Insert("node")
		}
		for _, n := range sets.List(names) {
			nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
	}
	if onlyNode != "" {
		kept := nodes[:0]
		for _, n := range nodes {
			if n.Name == onlyNode {
				kept = append(kept, n)
			}
		}
		nodes = kept
	}
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	classes := classLister{}
	for _, cl := range in.classes {
		if _, seen := classes[cl.Name]; !seen {
			classes[cl.Name] = cl
		}
	}
	return &cluster{slices: in.slices, classes: classes, nodes: nodes, celCache: newCELCache()}
}

// podClaims collects a pod's claims, allocated or not, each once, instantiating templates as
// <pod>-<entry> (added to byKey and appended to pending); returns a message when a referenced
// claim or template is missing.
func podClaims(in *inputs, pod *v1.Pod, byKey map[string]*resourceapi.ResourceClaim,
	pending *[]*resourceapi.ResourceClaim) ([]*resourceapi.ResourceClaim, string) {
	var out []*resourceapi.ResourceClaim
	seen := sets.New[string]()
	ns := namespace(pod.ObjectMeta)
	for _, prc := range pod.Spec.ResourceClaims {
		var c *resourceapi.ResourceClaim
		switch {
		case prc.ResourceClaimName != nil:
			var ok bool
			if c, ok = byKey[ns+"/"+*prc.ResourceClaimName]; !ok {
				return out, "resource claim " + *prc.ResourceClaimName + " not found"
			}
		case prc.ResourceClaimTemplateName != nil:
			var t *resourceapi.ResourceClaimTemplate
			for _, x := range in.templates {
				if namespace(x.ObjectMeta) == ns && x.Name == *prc.ResourceClaimTemplateName {
					t = x
					break
				}
			}
			if t == nil {
				return out, "resource claim template " + *prc.ResourceClaimTemplateName + " not found"
			}
			name := pod.Name + "-" + prc.Name
			k := ns + "/" + name
			var ok bool
			if c, ok = byKey[k]; !ok {
				c = instantiate(t, pod, prc, name)
				*pending = append(*pending, c)
				byKey[k] = c
			}
		}
		if c != nil && !seen.Has(key(c.ObjectMeta)) {
			seen.Insert(key(c.ObjectMeta))
			out = append(out, c)
		}
	}
	return out, ""
}

func instantiate(t *resourceapi.ResourceClaimTemplate, pod *v1.Pod, prc v1.PodResourceClaim, name string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{}
	c.APIVersion = "resource.k8s.io/v1"
	c.Kind = "ResourceClaim"
	c.Name = name
	c.Namespace = namespace(pod.ObjectMeta)
	if len(t.Spec.Labels) > 0 {
		c.Labels = map[string]string{}
		for k, v := range t.Spec.Labels {
			c.Labels[k] = v
		}
	}
	c.Annotations = map[string]string{}
	for k, v := range t.Spec.Annotations {
		c.Annotations[k] = v
	}
	c.Annotations["resource.kubernetes.io/pod-claim-name"] = prc.Name
	c.Spec = *t.Spec.Spec.DeepCopy()
	return c
}

func key(m metav1.ObjectMeta) string {
	return namespace(m) + "/" + m.Name
}

func namespace(m metav1.ObjectMeta) string {
	if m.Namespace == "" {
		return "default"
	}
	return m.Namespace
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
