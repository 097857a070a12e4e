// Command dra-alloc-upstream is the reference for bin/dra-alloc: the same input, the same
// pod/claim semantics and the same output shape, but every allocation decision is made by
// upstream's k8s.io/dynamic-resource-allocation/structured allocator (v0.37.2, the features
// kube-scheduler 1.37 enables by default). A test tool: the differential tests and the
// side-by-side benchmark run it; it is built by integration-tests/scripts/build-upstream-alloc.sh.
//
//	dra-alloc-upstream [-o yaml|json|summary] [--node NAME] [--feature-gates GATE=BOOL,...] FILE...
//	dra-alloc-upstream bench [--warmup N] [--rounds N] [--latencies FILE] FILE...
//	dra-alloc-upstream cel < JSON-LINES   (CEL selector outcomes, see celeval.go)
//	dra-alloc-upstream cel-overloads      (the CEL functions' overload order, see celoverloads.go)
//	dra-alloc-upstream filter < JSON-LINES (kube-scheduler's filter verdicts, see schedfilter.go)
//	dra-alloc-upstream score < JSON-LINES (kube-scheduler's score totals, see schedscore.go)
//	dra-alloc-upstream gang < JSON-LINES  (kube-scheduler's pod group cycle, see gang.go)
//	dra-alloc-upstream version            (Go and module versions as JSON, see version.go)
//
// Exit status: 0 every pending claim allocated, 1 at least one not (or a pod whose claims are
// allocated can run on no node), 2 bad input.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"sigs.k8s.io/yaml"
)

const usage = `Usage: dra-alloc-upstream [-o yaml|json|summary] [--node NAME] [--feature-gates GATE=BOOL,...] FILE...
       dra-alloc-upstream bench [--warmup N] [--rounds N] [--latencies FILE] FILE...
       dra-alloc-upstream cel < JSON-LINES
       dra-alloc-upstream cel-overloads
       dra-alloc-upstream filter < JSON-LINES
       dra-alloc-upstream score < JSON-LINES
       dra-alloc-upstream gang < JSON-LINES
       dra-alloc-upstream version
Shows how upstream's DRA allocator (k8s.io/dynamic-resource-allocation v0.37.2, Kubernetes 1.37
default features) allocates devices to pending ResourceClaims; same input and output as dra-alloc.
  -o, --output   yaml|json|summary (default yaml)
      --node     only consider this node
      --feature-gates GATE=BOOL,...  the allocator's gates as kube-scheduler takes them
  FILE           YAML or JSON files (multi-document, or kind: List); - reads stdin
Exit status: 0 every pending claim allocated, 1 at least one not (or a pod whose claims are
allocated can run on no node), 2 bad input.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "bench" {
		return bench(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "cel" {
		return celEval(stdin, stdout)
	}
	if len(args) > 0 && args[0] == "filter" {
		return schedFilter(stdin, stdout)
	}
	if len(args) > 0 && args[0] == "score" {
		return schedScore(stdin, stdout)
	}
	if len(args) > 0 && args[0] == "gang" {
		return schedGang(stdin, stdout)
	}
	if len(args) > 0 && args[0] == "cel-overloads" {
		return celOverloads(stdout)
	}
	if len(args) > 0 && args[0] == "version" {
		return version(stdout)
	}
	output, node := "yaml", ""
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func(name string) (string, bool) {
			if i+1 >= len(args) {
				fmt.Fprintf(stderr, "dra-alloc-upstream: option %s: missing value\n%s", name, usage)
				return "", false
			}
			i++
			return args[i], true
		}
		var ok = true
		switch {
		case a == "-h" || a == "--help":
			fmt.Fprint(stdout, usage)
			return 0
		case a == "-o" || a == "--output":
			output, ok = value(a)
		case strings.HasPrefix(a, "--output="):
			output = strings.TrimPrefix(a, "--output=")
		case strings.HasPrefix(a, "-o") && a != "-o":
			output = strings.TrimPrefix(strings.TrimPrefix(a, "-o"), "=")
		case a == "--feature-gates" || strings.HasPrefix(a, "--feature-gates="):
			spec := strings.TrimPrefix(a, "--feature-gates=")
			if a == "--feature-gates" {
				spec, ok = value(a)
			}
			if ok {
				var err error
				if features, err = withGates(features, spec); err != nil {
					fmt.Fprintf(stderr, "dra-alloc-upstream: option --feature-gates: %v\n", err)
					return 2
				}
			}
		case a == "--node":
			node, ok = value(a)
		case strings.HasPrefix(a, "--node="):
			node = strings.TrimPrefix(a, "--node=")
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case a != "-" && strings.HasPrefix(a, "-"):
			fmt.Fprintf(stderr, "dra-alloc-upstream: unknown option: %s\n%s", a, usage)
			return 2
		default:
			files = append(files, a)
		}
		if !ok {
			return 2
		}
	}
	if len(files) == 0 {
		fmt.Fprintf(stderr, "dra-alloc-upstream: missing FILE\n%s", usage)
		return 2
	}
	if output != "yaml" && output != "json" && output != "summary" {
		fmt.Fprintf(stderr, "dra-alloc-upstream: option -o: must be yaml, json or summary, not %q\n", output)
		return 2
	}
	in, err := readAll(files, stdin, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "dra-alloc-upstream: %v\n", err)
		return 2
	}
	r := whatIf(context.Background(), in, node)
	if output == "summary" {
		for _, c := range r.claims {
			if line, ok := summaryLine(c); ok {
				fmt.Fprintln(stdout, line)
			}
		}
	} else if err := printList(stdout, r.claims, output); err != nil {
		fmt.Fprintf(stderr, "dra-alloc-upstream: cannot print claims: %v\n", err)
		return 2
	}
	for _, f := range r.failures {
		fmt.Fprintln(stderr, f)
	}
	if len(r.failures) > 0 {
		return 1
	}
	return 0
}

func readAll(files []string, stdin io.Reader, warnings io.Writer) (*inputs, error) {
	in := &inputs{}
	for _, f := range files {
		if err := readFile(f, stdin, warnings, in); err != nil {
			var ie *inputError
			if errors.As(err, &ie) {
				return nil, ie
			}
			return nil, err
		}
	}
	return in, nil
}

// printList prints the claims as a kind: List, leaving out empty fields as dra-alloc does.
func printList(w io.Writer, claims []*resourceapi.ResourceClaim, output string) error {
	items := make([]any, 0, len(claims))
	for _, c := range claims {
		raw, err := json.Marshal(c)
		if err != nil {
			return err
		}
		var m any
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		items = append(items, prune(m))
	}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
	if output == "json" {
		raw, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", raw)
		return err
	}
	raw, err := yaml.Marshal(list)
	if err != nil {
		return err
	}
	_, err = w.Write(raw)
	return err
}

// prune drops nulls and empty maps and lists (e.g. creationTimestamp: null, status: {}).
func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			x = prune(x)
			if empty(x) {
				delete(t, k)
			} else {
				t[k] = x
			}
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = prune(x)
		}
		return t
	}
	return v
}

func empty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	case string:
		return t == ""
	}
	return false
}

// summaryLine: "ns/claim -> node-b: gpu (gpu.example.com/node-b/gpu-0)", as dra-alloc's Summary.
func summaryLine(c *resourceapi.ResourceClaim) (string, bool) {
	a := c.Status.Allocation
	if a == nil {
		return "", false
	}
	var devices []string
	for _, r := range a.Devices.Results {
		devices = append(devices, fmt.Sprintf("%s (%s/%s/%s)", r.Request, r.Driver, r.Pool, r.Device))
	}
	where := "any node"
	if ns := a.NodeSelector; ns != nil && len(ns.NodeSelectorTerms) > 0 {
		term := ns.NodeSelectorTerms[0]
		if len(term.MatchFields) == 1 && term.MatchFields[0].Key == "metadata.name" &&
			term.MatchFields[0].Operator == "In" && len(term.MatchFields[0].Values) == 1 {
			where = term.MatchFields[0].Values[0]
		} else {
			var exprs []string
			for _, r := range term.MatchExpressions {
				exprs = append(exprs, fmt.Sprintf("%s %s [%s]", r.Key, r.Operator, strings.Join(r.Values, ", ")))
			}
			where = "nodes matching [" + strings.Join(exprs, ", ") + "]"
		}
	}
	return fmt.Sprintf("%s -> %s: %s", key(c.ObjectMeta), where, strings.Join(devices, ", ")), true
}
