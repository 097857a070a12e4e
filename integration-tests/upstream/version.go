package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
)

// versionModules are the modules whose code decides what the oracle answers.
var versionModules = []string{
	"github.com/google/cel-go",
	"k8s.io/api",
	"k8s.io/apimachinery",
	"k8s.io/apiserver",
	"k8s.io/dynamic-resource-allocation",
	"k8s.io/kubernetes",
}

// version is `dra-alloc-upstream version`: one JSON object naming the Go release and the
// versions of the modules the binary was built from (after go.mod's replace directives), read
// from the binary's own build information. The golden files in dra-core's test resources carry
// it in their header, and dra-core's tests compare it with UpstreamSources.PINNED.
func version(stdout io.Writer) int {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(stdout, `{"error":"no build information in the binary"}`)
		return 2
	}
	modules := map[string]string{}
	for _, dep := range info.Deps {
		for _, name := range versionModules {
			if dep.Path != name {
				continue
			}
			v := dep.Version
			if dep.Replace != nil {
				v = dep.Replace.Version
			}
			modules[name] = v
		}
	}
	// encoding/json writes map keys sorted: the same binary prints the same line
	raw, err := json.Marshal(map[string]any{"go": info.GoVersion, "modules": modules})
	if err != nil {
		fmt.Fprintf(stdout, "{\"error\":%q}\n", err.Error())
		return 2
	}
	fmt.Fprintf(stdout, "%s\n", raw)
	return 0
}
