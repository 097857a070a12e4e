package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	kubefeatures "k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	testingclock "k8s.io/utils/clock/testing"
)

// gangGates are the gates `gang` turns on, as docs/user/gang-scheduling.md asks of a cluster:
// the Workload API (PodGroups, the GangScheduling plugin, the pod group scheduling cycle) and
// claims at PodGroup level. TopologyAwareWorkloadScheduling stays off (its default): a topology
// constraint is then ignored by both sides, and where it is on the two choose domains differently
// by design (upstream scores placements, kdra takes the first domain that fits).
var gangGates = map[string]bool{
	string(kubefeatures.GenericWorkload):           true,
	string(kubefeatures.DRAWorkloadResourceClaims): true,
}

// schedGang is `dra-alloc-upstream gang`: the reference for the gang differential. It reads
// JSON lines, each a cluster (nodes, ResourceSlices, DeviceClasses, ResourceClaims, namespaces,
// pods bound or pending, PodGroups) and the name of one PodGroup, and writes one JSON line per
// input: what kube-scheduler 1.37.2, with gangGates on and its default profile, decides for
// that group in one scheduling cycle, `runs` times (default 1), each in a fresh scheduler.
//
// Each run is the real scheduler (scheduler.New on a fake clientset, its informers, queue,
// cache and default plugins, GangScheduling and DynamicResources among them) and one
// ScheduleOne: the pod group scheduling cycle. What it placed is read at Permit (a plugin of
// this program's, after the default ones, that records each pod that reaches Permit and its
// node; Permit runs in the scheduling cycle, for the pods the cycle keeps); why the others were
// not is read from the scheduler's FailureHandler. The group's pending pods are created once
// the rest is in the scheduler's informers, in name order, as they arrive in a cluster after
// their claims and group. A group that never reaches the active queue (fewer pods than
// minCount, PodGroup missing) is "gated", with the gating plugins. The queue
// runs on a clock standing still, so the group's pods are tried in name order (priority,
// attempts and queue time tie), as kdra tries them. Node choice among equal scores is random
// upstream; `runs` > 1 shows whether a scenario's answer depends on it. For a group placed, the
// run also reports every claim's allocation once the binding cycles wrote them, so that the
// caller can check upstream's allocations (see GangDifferentialIT: 1.37.2's are wrong when
// members sharing a PodGroup-level claim have claims of their own).
func schedGang(stdin io.Reader, stdout io.Writer) int {
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gangGates); err != nil {
		fmt.Fprintf(stdout, "{\"error\":%q}\n", err.Error())
		return 2
	}
	// the scheduler logs its API calls' failures on the fake clientset (binding cycles cut short)
	klog.SetLogger(logr.Discard())
	// four scenarios at once: a run mostly waits for its informers
	return jsonLinesParallel(stdin, stdout, 4, func(sc gangScenario) any {
		res := gangResult{Name: sc.Name}
		runs := max(sc.Runs, 1)
		for i := 0; i < runs; i++ {
			r, err := gangOnce(sc)
			if err != nil {
				return gangResult{Name: sc.Name, Error: err.Error()}
			}
			res.Runs = append(res.Runs, r)
		}
		return res
	}, func(err error) any { return gangResult{Error: "bad input: " + err.Error()} })
}

type gangScenario struct {
	Name       string                               `json:"name"`
	Nodes      []*v1.Node                           `json:"nodes"`
	Pods       []*v1.Pod                            `json:"pods"`
	Namespaces []*v1.Namespace                      `json:"namespaces"`
	PodGroups  []*schedulingv1beta1.PodGroup        `json:"podGroups"`
	Claims     []*resourceapi.ResourceClaim         `json:"claims"`
	Slices     []*resourceapi.ResourceSlice         `json:"slices"`
	Classes    []*resourceapi.DeviceClass           `json:"classes"`
	Templates  []*resourceapi.ResourceClaimTemplate `json:"templates"`
	// Group: the PodGroup whose cycle is run (its pending pods are among Pods)
	Group string `json:"group"`
	Runs  int    `json:"runs"`
}

type gangResult struct {
	Name  string    `json:"name"`
	Runs  []gangRun `json:"runs,omitempty"`
	Error string    `json:"error,omitempty"`
}

// gangRun is one cycle's answer. Outcome: "scheduled" (Placed holds the pods the cycle kept and
// their nodes), "unschedulable" (no pod kept) or "gated" (the group never reached the active
// queue; Gating names the PreEnqueue plugins that held its pods).
type gangRun struct {
	Outcome string            `json:"outcome"`
	Placed  map[string]string `json:"placed,omitempty"`
	// Failed: pod name to the status message the FailureHandler got
	Failed map[string]string `json:"failed,omitempty"`
	Gating []string          `json:"gating,omitempty"`
	// Allocations: each allocated claim's devices (pool/device) once the binding cycles of the
	// placed pods wrote them (scheduled only)
	Allocations map[string][]string `json:"allocations,omitempty"`
}

// permitRecorder is a Permit plugin that records where each pod that reaches Permit goes.
type permitRecorder struct {
	mu     sync.Mutex
	placed map[string]string
}

const permitRecorderName = "KdraGangPermitRecorder"

func (r *permitRecorder) Name() string { return permitRecorderName }

func (r *permitRecorder) Permit(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.Status, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.placed[pod.Name] = nodeName
	return nil, 0
}

// gangProfile: the default profile (with the gates on: GangScheduling among its plugins) and the
// recorder at Permit after the default ones.
func gangProfile() (*config.KubeSchedulerProfile, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	profile := cfg.Profiles[0]
	profile.Plugins.Permit.Enabled = append(profile.Plugins.Permit.Enabled, config.Plugin{Name: permitRecorderName})
	return &profile, nil
}

func gangOnce(sc gangScenario) (gangRun, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var objects []runtime.Object
	for _, o := range sc.Namespaces {
		objects = append(objects, o)
	}
	for _, o := range sc.Nodes {
		objects = append(objects, o)
	}
	// the pending pods arrive after the rest is synced (below), as pods come after their
	// claims and group in a cluster; bound pods are there from the start
	var pending []*v1.Pod
	for _, o := range sc.Pods {
		if o.Spec.NodeName == "" {
			pending = append(pending, o)
			continue
		}
		objects = append(objects, o)
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].Name < pending[j].Name })
	for _, o := range sc.PodGroups {
		objects = append(objects, o)
	}
	for _, o := range sc.Claims {
		defaultClaim(o)
		objects = append(objects, o)
	}
	for _, o := range sc.Templates {
		defaultClaimSpec(&o.Spec.Spec)
		objects = append(objects, o)
	}
	for _, o := range sc.Slices {
		defaultSlice(o, time.Now())
		objects = append(objects, o)
	}
	for _, o := range sc.Classes {
		objects = append(objects, o)
	}
	client := fake.NewClientset(objects...)
	// bindings succeed without touching the pods: the answer is read at Permit
	var bound atomic.Int32
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() == "binding" {
			bound.Add(1)
			return true, nil, nil
		}
		return false, nil, nil
	})
	profile, err := gangProfile()
	if err != nil {
		return gangRun{}, err
	}
	recorder := &permitRecorder{placed: map[string]string{}}
	registry := frameworkruntime.Registry{
		permitRecorderName: func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
			return recorder, nil
		},
	}
	informerFactory := scheduler.NewInformerFactory(client, 0, nil)
	sched, err := scheduler.New(ctx, client, informerFactory, nil,
		func(string) events.EventRecorderLogger { return &events.FakeRecorder{} },
		scheduler.WithProfiles(*profile),
		scheduler.WithFrameworkOutOfTreeRegistry(registry),
		scheduler.WithClock(testingclock.NewFakeClock(time.Now())),
	)
	if err != nil {
		return gangRun{}, err
	}
	var failedMu sync.Mutex
	failed := map[string]string{}
	handle := sched.FailureHandler
	sched.FailureHandler = func(ctx context.Context, f framework.Framework, podInfo *framework.QueuedPodInfo,
		status *fwk.Status, nominatingInfo *fwk.NominatingInfo, start time.Time) {
		failedMu.Lock()
		failed[podInfo.Pod.Name] = status.Message()
		failedMu.Unlock()
		handle(ctx, f, podInfo, status, nominatingInfo, start)
	}
	informerFactory.Start(ctx.Done())
	if err := untilTrue(ctx, func(stop <-chan struct{}) bool {
		for _, ok := range informerFactory.WaitForCacheSync(stop) {
			if !ok {
				return false
			}
		}
		return true
	}); err != nil {
		return gangRun{}, err
	}
	if err := untilTrue(ctx, func(stop <-chan struct{}) bool {
		done, cancelNow := context.WithCancel(ctx)
		cancelNow() // one check, no waiting: WaitForHandlersSync polls every 100 ms
		return sched.WaitForHandlersSync(done) == nil
	}); err != nil {
		return gangRun{}, err
	}
	for _, p := range pending {
		if _, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return gangRun{}, err
		}
	}
	// Settled: every pod queued, and the group either held at PreEnqueue (none active) or
	// active whole. The last member's add makes the group active and the earlier, held members
	// join it in the same event handler; a look in between would pop a part of the group.
	// A group active in part for long (a member held by another plugin, which the scenarios do
	// not draw) is taken as it is after a second.
	settled := time.Now().Add(time.Second)
	if err := untilTrue(ctx, func(<-chan struct{}) bool {
		queued, _ := sched.SchedulingQueue.PendingPods()
		active := len(sched.SchedulingQueue.PodsInActiveQ())
		return len(queued) >= len(pending) &&
			(active == 0 || active == len(pending) || time.Now().After(settled))
	}); err != nil {
		return gangRun{}, err
	}
	if len(sched.SchedulingQueue.PodsInActiveQ()) == 0 {
		return gangRun{Outcome: "gated", Gating: gatingPlugins(sched, sc)}, nil
	}
	sched.ScheduleOne(ctx)
	recorder.mu.Lock()
	placed := recorder.placed
	recorder.mu.Unlock()
	failedMu.Lock()
	defer failedMu.Unlock()
	run := gangRun{Outcome: "unschedulable", Failed: failed}
	if len(placed) > 0 {
		run.Outcome = "scheduled"
		run.Placed = placed
		// the binding cycles (PreBind writes the claims' allocations, then Bind) run on
		// goroutines; five seconds is far more than they take
		deadline := time.Now().Add(5 * time.Second)
		if err := untilTrue(ctx, func(<-chan struct{}) bool {
			return int(bound.Load()) >= len(placed) || time.Now().After(deadline)
		}); err != nil {
			return gangRun{}, err
		}
		claims, err := client.ResourceV1().ResourceClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return gangRun{}, err
		}
		run.Allocations = map[string][]string{}
		for _, c := range claims.Items {
			if c.Status.Allocation == nil {
				continue
			}
			var devices []string
			for _, r := range c.Status.Allocation.Devices.Results {
				devices = append(devices, r.Pool+"/"+r.Device)
			}
			run.Allocations[c.Name] = devices
		}
	}
	return run, nil
}

// gatingPlugins: the PreEnqueue plugins holding the group's pending pods, sorted, each once.
func gatingPlugins(sched *scheduler.Scheduler, sc gangScenario) []string {
	seen := map[string]bool{}
	for _, p := range sc.Pods {
		if p.Spec.NodeName != "" {
			continue
		}
		if info, ok := sched.SchedulingQueue.GetPod(p.Name, p.Namespace, p.Spec.SchedulingGroup); ok && info.GatingPlugin != "" {
			seen[info.GatingPlugin] = true
		}
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// untilTrue checks done (given a closed channel, so that a check that waits returns at once)
// every millisecond until it holds: the informers' own waits poll every 100 ms, which would
// dominate a scenario's run time.
func untilTrue(ctx context.Context, done func(stop <-chan struct{}) bool) error {
	closed := make(chan struct{})
	close(closed)
	for !done(closed) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}
