package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	resourceapi "k8s.io/api/resource/v1"
)

// benchResult is the one JSON line bench prints; the Java harness (benchmarks module,
// UpstreamComparison) reads it.
type benchResult struct {
	Impl       string  `json:"impl"`
	Claims     int     `json:"claims"`
	Passes     int     `json:"passes"`
	TotalNanos int64   `json:"totalNanos"`
	ClaimsPerS float64 `json:"claimsPerSecond"`
	P50Nanos   int64   `json:"p50Nanos"`
	P99Nanos   int64   `json:"p99Nanos"`
}

// bench times the allocation of the input's pending claims, each as its own pod (no Pod objects
// are read), in input order, each allocation consuming devices for the next, starting every pass
// from the input's allocated claims. Warm-up passes (optionally shorter) are not timed. Every claim must be allocated:
// a benchmark that fails claims measures something else.
func bench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	warmup := fs.Int("warmup", 1, "untimed passes first")
	passes := fs.Int("rounds", 1, "timed passes")
	warmupClaims := fs.Int("warmup-claims", 0, "place only the first N claims in a warm-up pass (0: all)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the timed passes to this file (go tool pprof)")
	latencies := fs.String("latencies", "", "write every timed claim's latency in nanoseconds to this file, one a line")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 || *passes < 1 || *warmup < 0 {
		fmt.Fprintln(stderr, "dra-alloc-upstream bench: need FILE..., --rounds >= 1, --warmup >= 0")
		return 2
	}
	in, err := readAll(fs.Args(), os.Stdin, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "dra-alloc-upstream bench: %v\n", err)
		return 2
	}
	ctx := context.Background()
	c := newCluster(in, "")
	var initial []*resourceapi.AllocationResult
	var pending []*resourceapi.ResourceClaim
	for _, cl := range in.claims {
		if cl.Status.Allocation != nil {
			initial = append(initial, cl.Status.Allocation)
		} else {
			pending = append(pending, cl)
		}
	}
	var samples []int64
	var total time.Duration
	for pass := 0; pass < *warmup+*passes; pass++ {
		timed := pass >= *warmup
		if pass == *warmup && *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				fmt.Fprintf(stderr, "dra-alloc-upstream bench: %v\n", err)
				return 2
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintf(stderr, "dra-alloc-upstream bench: %v\n", err)
				return 2
			}
			defer pprof.StopCPUProfile()
		}
		state := newAllocState()
		for _, a := range initial {
			state.add(a)
		}
		for i, cl := range pending {
			if !timed && *warmupClaims > 0 && i >= *warmupClaims {
				break
			}
			start := time.Now()
			p := schedule(ctx, c, state, nil, []*resourceapi.ResourceClaim{cl}, nil)
			if p.node != "" {
				state.add(&p.results[0])
			}
			elapsed := time.Since(start)
			if p.node == "" {
				fmt.Fprintf(stderr, "dra-alloc-upstream bench: %s: not allocated: %s\n", key(cl.ObjectMeta), p.reason)
				return 1
			}
			if timed {
				samples = append(samples, elapsed.Nanoseconds())
				total += elapsed
			}
		}
	}
	if *latencies != "" {
		if err := writeLatencies(*latencies, samples); err != nil {
			fmt.Fprintf(stderr, "dra-alloc-upstream bench: %v\n", err)
			return 2
		}
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	r := benchResult{Impl: "upstream", Claims: len(samples), Passes: *passes, TotalNanos: total.Nanoseconds(),
		ClaimsPerS: float64(len(samples)) / total.Seconds(), P50Nanos: percentile(sorted, 50), P99Nanos: percentile(sorted, 99)}
	raw, _ := json.Marshal(r)
	fmt.Fprintf(stdout, "%s\n", raw)
	return 0
}

// percentile of sorted samples, nearest rank.
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func writeLatencies(file string, samples []int64) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, s := range samples {
		fmt.Fprintln(w, s)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
