package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	toolscache "k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/interpodaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodename"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeports"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeunschedulable"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/podtopologyspread"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumerestrictions"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumezone"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// schedFilter is `dra-alloc-upstream filter`: the reference for the scheduling differential test.
// It reads JSON lines {"name", "nodes", "pods", "namespaces", "pod"} from stdin (pods: the pods
// already on nodes; pod: the one to place) and writes one JSON line per input: each node's
// verdict from kube-scheduler 1.37's default Filter plugins (PreFilter, then Filter per node,
// first failure wins, as findNodesThatFitPod runs them) through the framework runtime, with the
// default profile's plugin arguments and kube-scheduler's default feature gates. The plugins:
// NodeName, NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
// VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, PodTopologySpread,
// InterPodAffinity in the default profile's order; DynamicResources is left out: the scenarios
// have no claims. The volume plugins read the scenario's PersistentVolumeClaims,
// PersistentVolumes, StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities through
// informers on a fake clientset (started only for scenarios that have any, or a pod with volumes).
// Terminal pods are dropped as kube-scheduler's pod informer drops them.
func schedFilter(stdin io.Reader, stdout io.Writer) int {
	metrics.Register() // the framework runtime records into the scheduler's metrics
	return jsonLines(stdin, stdout, func(sc filterScenario) any {
		res, err := filterOne(sc)
		if err != nil {
			return filterResult{Name: sc.Name, Error: err.Error()}
		}
		return res
	}, func(err error) any { return filterResult{Error: "bad input: " + err.Error()} })
}

type filterScenario struct {
	Name       string          `json:"name"`
	Nodes      []*v1.Node      `json:"nodes"`
	Pods       []*v1.Pod       `json:"pods"`
	Namespaces []*v1.Namespace `json:"namespaces"`
	Pod        *v1.Pod         `json:"pod"`
	// the volume plugins' objects
	PVCs           []*v1.PersistentVolumeClaim `json:"pvcs"`
	PVs            []*v1.PersistentVolume      `json:"pvs"`
	StorageClasses []*storagev1.StorageClass   `json:"storageClasses"`
	CSINodes       []*storagev1.CSINode        `json:"csiNodes"`
	// VolumeBinding's storage capacity check of a claim to be provisioned
	CSIDrivers           []*storagev1.CSIDriver          `json:"csiDrivers"`
	CSIStorageCapacities []*storagev1.CSIStorageCapacity `json:"csiStorageCapacities"`
}

// hasVolumes: whether the scenario's volume plugins need their informers.
func (sc filterScenario) hasVolumes() bool {
	if len(sc.PVCs)+len(sc.PVs)+len(sc.StorageClasses)+len(sc.CSINodes)+
		len(sc.CSIDrivers)+len(sc.CSIStorageCapacities) > 0 {
		return true
	}
	for _, v := range sc.Pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return true
		}
	}
	return false
}

// nodeVerdict: Plugin empty means the node is feasible; else the first plugin that rejected it
// (PreFilter or Filter) and its reasons.
type nodeVerdict struct {
	Plugin  string   `json:"plugin,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
}

type filterResult struct {
	Name  string                 `json:"name"`
	Nodes map[string]nodeVerdict `json:"nodes,omitempty"`
	Error string                 `json:"error,omitempty"`
}

// The default profile's filter plugins in its MultiPoint order, with the queue sort and binder
// a profile must have.
var filterPlugins = []string{
	names.PrioritySort,
	names.NodeName,
	names.NodeUnschedulable,
	names.TaintToleration,
	names.NodeAffinity,
	names.NodePorts,
	names.NodeResourcesFit,
	names.VolumeRestrictions,
	names.NodeVolumeLimits,
	names.VolumeBinding,
	names.VolumeZone,
	names.PodTopologySpread,
	names.InterPodAffinity,
	names.DefaultBinder,
}

func filterRegistry() frameworkruntime.Registry {
	fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	return frameworkruntime.Registry{
		queuesort.Name:           queuesort.New,
		defaultbinder.Name:       defaultbinder.New,
		nodename.Name:            frameworkruntime.FactoryAdapter(fts, nodename.New),
		nodeunschedulable.Name:   frameworkruntime.FactoryAdapter(fts, nodeunschedulable.New),
		tainttoleration.Name:     frameworkruntime.FactoryAdapter(fts, tainttoleration.New),
		nodeaffinity.Name:        frameworkruntime.FactoryAdapter(fts, nodeaffinity.New),
		nodeports.Name:           frameworkruntime.FactoryAdapter(fts, nodeports.New),
		noderesources.Name:       frameworkruntime.FactoryAdapter(fts, noderesources.NewFit),
		volumerestrictions.Name:  frameworkruntime.FactoryAdapter(fts, volumerestrictions.New),
		nodevolumelimits.CSIName: frameworkruntime.FactoryAdapter(fts, nodevolumelimits.NewCSI),
		volumebinding.Name:       frameworkruntime.FactoryAdapter(fts, volumebinding.New),
		volumezone.Name:          frameworkruntime.FactoryAdapter(fts, volumezone.New),
		podtopologyspread.Name:   frameworkruntime.FactoryAdapter(fts, podtopologyspread.New),
		interpodaffinity.Name:    frameworkruntime.FactoryAdapter(fts, interpodaffinity.New),
	}
}

// filterProfile: the default profile (its defaulted plugin arguments) with only filterPlugins.
func filterProfile() (*config.KubeSchedulerProfile, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	profile := cfg.Profiles[0]
	enabled := make([]config.Plugin, 0, len(filterPlugins))
	for _, name := range filterPlugins {
		enabled = append(enabled, config.Plugin{Name: name, Weight: 1})
	}
	profile.Plugins = &config.Plugins{MultiPoint: config.PluginSet{Enabled: enabled}}
	return &profile, nil
}

func filterOne(sc filterScenario) (filterResult, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	profile, err := filterProfile()
	if err != nil {
		return filterResult{}, err
	}
	res, _, _, _, err := runFilters(ctx, sc, filterRegistry(), profile)
	return res, err
}

// runFilters runs PreFilter and Filter of the profile's plugins on every node of the scenario:
// each node's verdict, with the framework, its cycle state and the feasible nodes (in the
// snapshot's order) for the phases after.
func runFilters(ctx context.Context, sc filterScenario, registry frameworkruntime.Registry,
	profile *config.KubeSchedulerProfile) (filterResult, framework.Framework, fwk.CycleState, []fwk.NodeInfo, error) {
	if sc.Pod == nil {
		return filterResult{}, nil, nil, nil, fmt.Errorf("scenario %q has no pod", sc.Name)
	}
	var placed []*v1.Pod
	for _, p := range sc.Pods {
		if p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			placed = append(placed, p)
		}
	}
	snapshot := cache.NewSnapshot(placed, sc.Nodes)
	withVolumes := sc.hasVolumes()
	var client *fake.Clientset
	if withVolumes {
		// The volume plugins read through informers whose event handlers fill their caches (the
		// assume caches of VolumeBinding): started on a fake clientset holding the objects.
		var objects []runtime.Object
		for _, o := range sc.Namespaces {
			objects = append(objects, o)
		}
		for _, o := range sc.PVCs {
			objects = append(objects, o)
		}
		for _, o := range sc.PVs {
			objects = append(objects, o)
		}
		for _, o := range sc.StorageClasses {
			objects = append(objects, o)
		}
		for _, o := range sc.CSINodes {
			objects = append(objects, o)
		}
		for _, o := range sc.CSIDrivers {
			objects = append(objects, o)
		}
		for _, o := range sc.CSIStorageCapacities {
			objects = append(objects, o)
		}
		client = fake.NewSimpleClientset(objects...)
	}
	var factory informers.SharedInformerFactory
	if withVolumes {
		factory = informers.NewSharedInformerFactory(client, 0)
	} else {
		// Never started: InterPodAffinity reads namespaces through its lister, which reads the
		// indexer; the client is never called, and the volume plugins skip a pod without volumes.
		factory = informers.NewSharedInformerFactory(nil, 0)
		nsIndexer := factory.Core().V1().Namespaces().Informer().GetIndexer()
		for _, ns := range sc.Namespaces {
			if err := nsIndexer.Add(ns); err != nil {
				return filterResult{}, nil, nil, nil, err
			}
		}
	}
	opts := []frameworkruntime.Option{
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithInformerFactory(factory),
		// NodeVolumeLimits reads CSINodes through it, as kube-scheduler sets it up
		frameworkruntime.WithSharedCSIManager(
			nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
	}
	if withVolumes {
		opts = append(opts, frameworkruntime.WithClientSet(client))
	}
	f, err := frameworkruntime.NewFramework(ctx, registry, profile, opts...)
	if err != nil {
		return filterResult{}, nil, nil, nil, err
	}
	if withVolumes {
		// made before the start, so that a profile without the volume plugins starts them too
		synced := volumeInformersSynced(factory)
		factory.Start(ctx.Done())
		if err := awaitSynced(ctx, factory, synced); err != nil {
			return filterResult{}, nil, nil, nil, err
		}
	}
	state := framework.NewCycleState()
	res := filterResult{Name: sc.Name, Nodes: map[string]nodeVerdict{}}
	preRes, s, unschedulable := f.RunPreFilterPlugins(ctx, state, sc.Pod)
	if !s.IsSuccess() {
		if !s.IsRejected() {
			return filterResult{}, nil, nil, nil, s.AsError()
		}
		v := verdictOf(s)
		if v.Plugin == "" {
			// the framework's own status when the PreFilter results exclude each other
			v.Plugin = strings.Join(sortedNames(unschedulable), ",")
		}
		for _, n := range sc.Nodes {
			res.Nodes[n.Name] = v
		}
		return res, f, state, nil, nil
	}
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		return filterResult{}, nil, nil, nil, err
	}
	var feasible []fwk.NodeInfo
	for _, info := range infos {
		name := info.Node().Name
		if !preRes.AllNodes() && !preRes.NodeNames.Has(name) {
			plugins := sortedNames(unschedulable)
			res.Nodes[name] = nodeVerdict{Plugin: strings.Join(plugins, ","),
				Reasons: []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", plugins)}}
			continue
		}
		st := f.RunFilterPlugins(ctx, state, sc.Pod, info) // no nominated pods in the scenarios
		if st.IsSuccess() {
			res.Nodes[name] = nodeVerdict{}
			feasible = append(feasible, info)
			continue
		}
		if !st.IsRejected() {
			return filterResult{}, nil, nil, nil, st.AsError()
		}
		res.Nodes[name] = verdictOf(st)
	}
	return res, f, state, feasible, nil
}

// volumeInformersSynced makes the informers of the scenario's objects and returns their synced
// checks.
func volumeInformersSynced(factory informers.SharedInformerFactory) []toolscache.InformerSynced {
	return []toolscache.InformerSynced{
		factory.Core().V1().Namespaces().Informer().HasSynced,
		factory.Core().V1().PersistentVolumeClaims().Informer().HasSynced,
		factory.Core().V1().PersistentVolumes().Informer().HasSynced,
		factory.Storage().V1().StorageClasses().Informer().HasSynced,
		factory.Storage().V1().CSINodes().Informer().HasSynced,
		factory.Storage().V1().CSIDrivers().Informer().HasSynced,
		factory.Storage().V1().CSIStorageCapacities().Informer().HasSynced,
	}
}

// awaitSynced waits for the informers (a tight poll on those of the scenario's objects: the
// factory's own wait polls every 100 ms, which would dominate a scenario's run time; the others
// have listed nothing by then).
func awaitSynced(ctx context.Context, factory informers.SharedInformerFactory,
	synced []toolscache.InformerSynced) error {
	for _, has := range synced {
		for !has() {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
	}
	// and every other informer a plugin started (CSIDrivers, VolumeAttachments, capacities)
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer %v did not sync", typ)
		}
	}
	return nil
}

func verdictOf(s *fwk.Status) nodeVerdict {
	reasons := s.Reasons()
	if len(reasons) == 0 {
		reasons = []string{s.Message()}
	}
	return nodeVerdict{Plugin: s.Plugin(), Reasons: reasons}
}

func sortedNames[T interface{ UnsortedList() []string }](s T) []string {
	l := s.UnsortedList()
	sort.Strings(l)
	return l
}
