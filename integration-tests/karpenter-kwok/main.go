// kdra-karpenter-kwok is Karpenter's KWOK provider (sigs.k8s.io/karpenter/kwok, unchanged) with
// two additions the integration tests need:
//
//   - each instance type carries DynamicResources.ResourceSliceTemplates, read from a JSON file
//     kdra generates from the simulated driver's inventory for that type (KDRA_TEMPLATES_FILE), so
//     Karpenter's DRA simulation (--ignore-dra-requests=false) sees the devices a new node of that
//     type will publish;
//   - instance types named in a file (KDRA_UNAVAILABLE_FILE, one name a line, read at every call)
//     have no available offering and fail Create with an insufficient-capacity error, the way a
//     cloud without capacity answers, so that fallback to the next NodePool can be tested.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unique"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/node/health"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/operator"
)

// instanceTypeTemplates is one entry of KDRA_TEMPLATES_FILE: the ResourceSlice specs (without
// nodeName, as Karpenter's templates are implicitly node-local) that a node of the type publishes.
type instanceTypeTemplates struct {
	InstanceType string                         `json:"instanceType"`
	Slices       []resourcev1.ResourceSliceSpec `json:"slices"`
}

func main() {
	ctx, op := operator.NewOperator()
	instanceTypes, err := kwok.ConstructInstanceTypes(ctx)
	if err != nil {
		log.FromContext(ctx).Error(err, "failed constructing instance types")
	}
	if path := os.Getenv("KDRA_TEMPLATES_FILE"); path != "" {
		if err := attachTemplates(instanceTypes, path); err != nil {
			log.FromContext(ctx).Error(err, "failed reading DRA templates")
			os.Exit(1)
		}
	}

	base := kwok.NewCloudProvider(ctx, op.GetClient(), instanceTypes)
	gated := &capacityGate{CloudProvider: base, unavailableFile: os.Getenv("KDRA_UNAVAILABLE_FILE")}
	cloudProvider := overlay.Decorate(gated, op.GetClient(), op.InstanceTypeStore)
	repairPolicyMatcher := lo.Must(health.NewRepairPolicyMatcher(ctx, cloudProvider))
	clusterState := state.NewCluster(op.Clock, op.GetClient(), cloudProvider, state.WithRepairPolicyMatcher(repairPolicyMatcher))
	op.
		WithControllers(ctx, controllers.NewControllers(
			ctx,
			op.Manager,
			op.Clock,
			op.GetClient(),
			op.EventRecorder,
			cloudProvider,
			gated,
			clusterState,
			op.InstanceTypeStore,
			op.PredictionStore,
		)...).Start(ctx)
}

func attachTemplates(instanceTypes []*cloudprovider.InstanceType, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var entries []instanceTypeTemplates
	if err := json.Unmarshal(raw, &entries); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	byName := lo.SliceToMap(entries, func(e instanceTypeTemplates) (string, instanceTypeTemplates) { return e.InstanceType, e })
	for _, it := range instanceTypes {
		entry, ok := byName[it.Name]
		if !ok {
			continue
		}
		it.DynamicResources.ResourceSliceTemplates = lo.Map(entry.Slices, func(s resourcev1.ResourceSliceSpec, _ int) *cloudprovider.ResourceSliceTemplate {
			return template(s)
		})
		delete(byName, it.Name)
	}
	if len(byName) > 0 {
		return fmt.Errorf("%s names instance types the instance-types file lacks: %v", path, lo.Keys(byName))
	}
	return nil
}

func template(s resourcev1.ResourceSliceSpec) *cloudprovider.ResourceSliceTemplate {
	return &cloudprovider.ResourceSliceTemplate{
		Driver:         unique.Make(s.Driver),
		Pool:           cloudprovider.ResourcePool{Name: unique.Make(s.Pool.Name)},
		SharedCounters: s.SharedCounters,
		Devices: lo.Map(s.Devices, func(d resourcev1.Device, _ int) cloudprovider.Device {
			return cloudprovider.Device{
				Name:                     unique.Make(d.Name),
				Attributes:               d.Attributes,
				Capacity:                 d.Capacity,
				AllowMultipleAllocations: lo.FromPtr(d.AllowMultipleAllocations),
				ConsumesCounters:         d.ConsumesCounters,
			}
		}),
	}
}

// capacityGate makes the instance types named in its file unavailable.
type capacityGate struct {
	*kwok.CloudProvider
	unavailableFile string
}

func (g *capacityGate) unavailable() map[string]bool {
	out := map[string]bool{}
	if g.unavailableFile == "" {
		return out
	}
	raw, err := os.ReadFile(g.unavailableFile)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if name := strings.TrimSpace(line); name != "" {
			out[name] = true
		}
	}
	return out
}

func (g *capacityGate) GetInstanceTypes(ctx context.Context, nodePool *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	types, err := g.CloudProvider.GetInstanceTypes(ctx, nodePool)
	if err != nil {
		return nil, err
	}
	out := g.unavailable()
	return lo.Map(types, func(it *cloudprovider.InstanceType, _ int) *cloudprovider.InstanceType {
		if !out[it.Name] {
			return it
		}
		// a new InstanceType, not a copy: one caches its available offerings (a sync.Once over
		// the offerings it had when first asked), which a copy would carry over unchanged
		return &cloudprovider.InstanceType{
			Name:                   it.Name,
			Requirements:           it.Requirements,
			Capacity:               it.Capacity,
			VolumeAttachmentLimits: it.VolumeAttachmentLimits,
			DynamicResources:       it.DynamicResources,
			Overhead:               it.Overhead,
			Offerings: lo.Map(it.Offerings, func(o *cloudprovider.Offering, _ int) *cloudprovider.Offering {
				off := *o
				off.Available = false
				return &off
			}),
		}
	}), nil
}

func (g *capacityGate) Create(ctx context.Context, nodeClaim *v1.NodeClaim) (*v1.NodeClaim, error) {
	out := g.unavailable()
	for _, req := range nodeClaim.Spec.Requirements {
		if req.Key != corev1.LabelInstanceTypeStable {
			continue
		}
		if lo.EveryBy(req.Values, func(name string) bool { return out[name] }) {
			return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("no capacity for instance types %v", req.Values))
		}
	}
	return g.CloudProvider.Create(ctx, nodeClaim)
}
