package main

import (
	"context"
	"fmt"
	"io"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"
)

// celEval is `dra-alloc-upstream cel`: the reference for the CEL differential test. It reads
// JSON lines {"id", "expression", "device"} from stdin and writes one JSON line per input with
// the outcome upstream's k8s.io/dynamic-resource-allocation/cel gives: compile error, runtime
// error, true or false, the estimated worst-case cost and the actual cost of the evaluation. The compiler is the one kube-scheduler
// 1.37 uses (consumable capacity on, list-type attributes off), with the default environment
// type (StoredExpressions) and runtime cost limit, as the allocator compiles selectors.
func celEval(stdin io.Reader, stdout io.Writer) int {
	compiler := cel.GetCompiler(cel.Features{EnableConsumableCapacity: true, EnableListTypeAttributes: false})
	return jsonLines(stdin, stdout, func(req celRequest) any { return evalOne(compiler, req) },
		func(err error) any { return celResult{Outcome: "bad_input", Error: err.Error()} })
}

type celRequest struct {
	ID         int       `json:"id"`
	Expression string    `json:"expression"`
	Device     celDevice `json:"device"`
}

type celDevice struct {
	Driver                   string                                                    `json:"driver"`
	AllowMultipleAllocations *bool                                                     `json:"allowMultipleAllocations,omitempty"`
	Attributes               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute `json:"attributes,omitempty"`
	Capacity                 map[resourceapi.QualifiedName]resourceapi.DeviceCapacity  `json:"capacity,omitempty"`
}

type celResult struct {
	ID int `json:"id"`
	// compile_error, runtime_error, true, false (bad_input for an unreadable line)
	Outcome string `json:"outcome"`
	// Estimated worst-case cost; absent after a compile error.
	Cost *uint64 `json:"cost,omitempty"`
	// Whether API validation would reject the expression for its estimated cost.
	CostRejected bool `json:"costRejected,omitempty"`
	// cel-go's actual cost of the evaluation (absent when none was tracked).
	ActualCost *uint64 `json:"actualCost,omitempty"`
	Error      string  `json:"error,omitempty"`
}

func evalOne(compiler interface {
	CompileCELExpression(string, cel.Options) cel.CompilationResult
}, req celRequest) (res celResult) {
	res.ID = req.ID
	defer func() {
		if r := recover(); r != nil {
			res.Outcome, res.Error = "runtime_error", fmt.Sprintf("panic: %v", r)
		}
	}()
	compiled := compiler.CompileCELExpression(req.Expression, cel.Options{})
	if compiled.Error != nil {
		res.Outcome, res.Error = "compile_error", compiled.Error.Error()
		return res
	}
	cost := compiled.MaxCost
	res.Cost = &cost
	res.CostRejected = cost > resourceapi.CELSelectorExpressionMaxCost
	matches, details, err := compiled.DeviceMatches(context.Background(), cel.Device{
		Driver:                   req.Device.Driver,
		AllowMultipleAllocations: req.Device.AllowMultipleAllocations,
		Attributes:               req.Device.Attributes,
		Capacity:                 req.Device.Capacity,
	})
	if details != nil && details.ActualCost() != nil {
		actual := *details.ActualCost()
		res.ActualCost = &actual
	}
	switch {
	case err != nil:
		res.Outcome, res.Error = "runtime_error", err.Error()
	case matches:
		res.Outcome = "true"
	default:
		res.Outcome = "false"
	}
	return res
}
