package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apiserver/pkg/cel/environment"
)

// celOverloads is `dra-alloc-upstream cel-overloads`: every function of the CEL environment
// DRA selectors are compiled in (the API server's base environment, StoredExpressions, at the
// default compatibility version, as k8s.io/dynamic-resource-allocation/cel builds on it), one
// line per function: its name, a tab, and its overload IDs in declaration order. The checker
// tries overloads in that order, and where an argument's type is still free (the elements of
// an empty list) the first overload that fits decides it, so the order is part of upstream's
// typing: dra-core declares its functions in the same order (CelOverloadOrder).
func celOverloads(stdout io.Writer) int {
	env := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).StoredExpressionsEnv()
	functions := env.Functions()
	names := make([]string, 0, len(functions))
	for name := range functions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var ids []string
		for _, o := range functions[name].OverloadDecls() {
			ids = append(ids, o.ID())
		}
		fmt.Fprintf(stdout, "%s\t%s\n", name, strings.Join(ids, ","))
	}
	return 0
}
