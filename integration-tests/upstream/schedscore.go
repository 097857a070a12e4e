package main

import (
	"context"
	"io"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/imagelocality"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// schedScore is `dra-alloc-upstream score`: the reference for the score differential. It reads
// the same JSON lines as `filter` and writes one JSON line per input: the feasible nodes (the
// default Filter plugins, as `filter` runs them) and, when more than one is feasible (else
// kube-scheduler scores nothing), each one's total of the default profile's Score plugins after
// NormalizeScore, weighted as the profile weighs them (RunPreScorePlugins, then RunScorePlugins),
// with each plugin's weighted share. DynamicResources is left out: the scenarios have no claims.
func schedScore(stdin io.Reader, stdout io.Writer) int {
	metrics.Register()
	return jsonLines(stdin, stdout, func(sc filterScenario) any {
		res, err := scoreOne(sc)
		if err != nil {
			return scoreResult{Name: sc.Name, Error: err.Error()}
		}
		return res
	}, func(err error) any { return scoreResult{Error: "bad input: " + err.Error()} })
}

type scoreResult struct {
	Name     string   `json:"name"`
	Feasible []string `json:"feasible"`
	// Totals: node name to its weighted total; ByPlugin: node name to plugin to its weighted score.
	Totals   map[string]int64            `json:"totals,omitempty"`
	ByPlugin map[string]map[string]int64 `json:"byPlugin,omitempty"`
	Error    string                      `json:"error,omitempty"`
}

// The default profile's score plugins that the scenarios exercise, besides those that filter too.
var scoreOnlyPlugins = []string{
	names.NodeResourcesBalancedAllocation,
	names.ImageLocality,
}

func scoreRegistry() frameworkruntime.Registry {
	fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	r := filterRegistry()
	r[noderesources.BalancedAllocationName] = frameworkruntime.FactoryAdapter(fts, noderesources.NewBalancedAllocation)
	r[imagelocality.Name] = imagelocality.New
	return r
}

// scoreProfile: the default profile (its defaulted plugin arguments) with the filter and score
// plugins, each weighted as the default profile's MultiPoint weighs it.
func scoreProfile() (*config.KubeSchedulerProfile, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	profile := cfg.Profiles[0]
	weights := map[string]int32{}
	for _, p := range profile.Plugins.MultiPoint.Enabled {
		weights[p.Name] = p.Weight
	}
	var enabled []config.Plugin
	for _, name := range append(append([]string{}, filterPlugins...), scoreOnlyPlugins...) {
		w := weights[name]
		if w == 0 {
			w = 1
		}
		enabled = append(enabled, config.Plugin{Name: name, Weight: w})
	}
	profile.Plugins = &config.Plugins{MultiPoint: config.PluginSet{Enabled: enabled}}
	return &profile, nil
}

func scoreOne(sc filterScenario) (scoreResult, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	profile, err := scoreProfile()
	if err != nil {
		return scoreResult{}, err
	}
	_, f, state, feasible, err := runFilters(ctx, sc, scoreRegistry(), profile)
	if err != nil {
		return scoreResult{}, err
	}
	res := scoreResult{Name: sc.Name, Feasible: []string{}}
	for _, info := range feasible {
		res.Feasible = append(res.Feasible, info.Node().Name)
	}
	if len(feasible) < 2 {
		return res, nil // schedulePod takes a single feasible node without scoring
	}
	if st := f.RunPreScorePlugins(ctx, state, sc.Pod, feasible); !st.IsSuccess() {
		return scoreResult{}, st.AsError()
	}
	scores, st := f.RunScorePlugins(ctx, state, sc.Pod, feasible)
	if !st.IsSuccess() {
		return scoreResult{}, st.AsError()
	}
	res.Totals = map[string]int64{}
	res.ByPlugin = map[string]map[string]int64{}
	for _, s := range scores {
		res.Totals[s.Name] = s.TotalScore
		per := map[string]int64{}
		for _, p := range s.Scores {
			per[p.Name] = p.Score
		}
		res.ByPlugin[s.Name] = per
	}
	return res, nil
}
