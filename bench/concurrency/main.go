// Command concurrency measures whether check's concurrency changes what it
// measures: the TFC of the built-in reference target's samples run one at
// a time against the same runs with C in flight, blocks of both
// alternating (so a slow minute of the machine hits both alike), compared
// as compare compares a candidate: the shift of the median
// (Hodges-Lehmann, its Mann-Whitney interval) and the change of the p95
// (bootstrap over runs, fixed seed), each at 95%.
//
//	go run ./bench/concurrency -c 4,8 -runs 60
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/stats"
)

const cfgText = `[[target]]
name = "reference-chat"
builtin = true
dialect = "openai-chat"
samples = ["short", "long", "cancel"]
[[target]]
name = "reference-mcp"
builtin = true
dialect = "mcp"
samples = ["short"]
`

func main() {
	levels := flag.String("c", "4,8", "the concurrencies to compare with one at a time")
	runs := flag.Int("runs", 60, "runs of each sample at each level")
	block := flag.Int("block", 10, "runs of each sample per block; blocks of each level alternate")
	flag.Parse()
	var cs []int
	for _, f := range strings.Split(*levels, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 2 {
			fmt.Fprintf(os.Stderr, "concurrency: -c %q: want concurrencies of 2 or more\n", *levels)
			os.Exit(2)
		}
		cs = append(cs, c)
	}
	cfg, err := config.Parse("bench", []byte(cfgText), jobs.Env(os.Getenv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	srv := builtin.New()
	srv.Start()
	defer srv.Close()
	js, err := jobs.Build(cfg, srv.URL, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	levelsAll := append([]int{1}, cs...)
	tfc := map[int]map[string][]float64{}
	for _, c := range levelsAll {
		tfc[c] = map[string][]float64{}
	}
	start := time.Now()
	for done := 0; done < *runs; done += *block {
		n := min(*block, *runs-done)
		for _, c := range levelsAll {
			measure(js, c, n, tfc[c])
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("concurrency: TFC of the built-in target, %d runs of each sample at each level in blocks of %d, %s; load average %s\n",
		*runs, *block, time.Since(start).Round(time.Second), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("%-22s %5s %18s %18s %30s %30s\n", "job", "c", "p50 alone/under", "p95 alone/under", "median shift (95%)", "p95 change (95%)")
	rng := rand.New(rand.NewPCG(1, 1))
	for _, j := range js {
		alone := tfc[1][j.Name]
		for _, c := range cs {
			under := tfc[c][j.Name]
			sh, _ := stats.LogShift(alone, under, 0.05)
			p95, _ := stats.BootQuantile(single(alone), single(under), 0.95, 0.05, 4000, rng)
			fmt.Printf("%-22s %5d %8.1f/%-8.1f %8.1f/%-8.1f %30s %30s\n", j.Name, c, q(alone, 0.5), q(under, 0.5), q(alone, 0.95), q(under, 0.95), pct(sh), pct(p95))
		}
	}
}

// measure runs n runs of every job with c in flight, interleaved, and
// adds each TFC to out by job.
func measure(js []jobs.Job, c, n int, out map[string][]float64) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, c)
	for range n {
		for _, j := range js {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				res := j.Run(context.Background(), nil)
				if res.Record.TFCMs != nil && res.Record.Intended() {
					mu.Lock()
					out[j.Name] = append(out[j.Name], *res.Record.TFCMs)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
}

func single(v []float64) *stats.Pooled {
	rs := make([][]float64, len(v))
	for i := range v {
		rs[i] = v[i : i+1]
	}
	return stats.NewPooled(rs)
}

func q(v []float64, p float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(math.RoundToEven(p*float64(len(s)-1))))]
}

func pct(c stats.Change) string {
	f := func(x float64) float64 { return (math.Exp(x) - 1) * 100 }
	return fmt.Sprintf("%+.2f%% [%+.2f, %+.2f]", f(c.Est), f(c.Lo), f(c.Hi))
}
