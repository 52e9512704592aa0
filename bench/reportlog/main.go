// Command reportlog writes a synthetic results log for measuring `report`
// on a large input: N records as the daemon writes them (one JSON object a
// line, region and host added), for -targets targets (chat-a, chat-b...)
// x -regions regions x the short, long and cancel samples, with a drill
// run every 10th, each long record carrying ~100 gap values; and, with
// -unknown K, one run in 50 of one of K targets no config names
// (stray-0...). The values are drawn from a fixed seed, so two runs write
// the same log. -config writes the config that names the targets.
//
//	go run ./bench/reportlog -n 1000000 > /tmp/big.log
//	/usr/bin/time -v streamprobe report -config probe.example.toml -log /tmp/big.log > /dev/null
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/probe"
)

type line struct {
	probe.Record
	Region string `json:"region,omitempty"`
	Host   string `json:"host,omitempty"`
}

func main() {
	n := flag.Int("n", 1_000_000, "records to write")
	nTargets := flag.Int("targets", 4, "targets named in the config")
	nRegions := flag.Int("regions", 3, "regions")
	unknown := flag.Int("unknown", 0, "targets no config names: one run in 50 is one of theirs")
	cfgPath := flag.String("config", "", "also write the config naming the targets to this file")
	flag.Parse()
	if *n < 0 {
		fmt.Fprintln(os.Stderr, "reportlog: -n must be 0 or more")
		os.Exit(2)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	enc := json.NewEncoder(w)
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var targets, regions []string
	for i := range max(*nTargets, 1) {
		targets = append(targets, fmt.Sprintf("chat-%c%d", 'a'+i%26, i/26))
	}
	for i := range max(*nRegions, 1) {
		regions = append(regions, fmt.Sprintf("region-%d", i))
	}
	if *cfgPath != "" {
		var b strings.Builder
		for _, t := range targets {
			fmt.Fprintf(&b, "[[target]]\nname = %q\nurl = \"http://api.example\"\n", t)
		}
		if err := os.WriteFile(*cfgPath, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "reportlog:", err)
			os.Exit(1)
		}
	}
	samples := []string{"short", "long", "cancel"}
	ms := func(v float64) *float64 { v = math.Round(v*1000) / 1000; return &v }
	for i := range *n {
		sample := samples[i%3]
		rec := probe.Record{
			RequestID:  fmt.Sprintf("sp-%016x", rng.Uint64()),
			Target:     targets[(i/3)%len(targets)],
			Sample:     sample,
			StartedAt:  start.Add(time.Duration(i) * 250 * time.Millisecond).Format(time.RFC3339Nano),
			Outcome:    probe.Success,
			HTTPStatus: 200,
		}
		chunks := 12
		switch sample {
		case "long":
			chunks = 100
		case "cancel":
			rec.Outcome = probe.ClientCancelled
			chunks = 3
		}
		if *unknown > 0 && i%50 == 49 {
			rec.Target = fmt.Sprintf("stray-%d", rng.IntN(*unknown))
		}
		if i%10 == 9 {
			rec.Drill, rec.Verdict = probe.DrillDrop, probe.VerdictPass
		}
		if rng.IntN(200) == 0 {
			rec.Verdict = ""
			rec.Outcome, rec.HTTPStatus, rec.Error, chunks = probe.UpstreamError, 503, "HTTP 503 Service Unavailable", 0
		}
		if chunks > 0 {
			rec.HeadersMs = ms(20 + rng.Float64()*10)
			rec.TFCMs = ms(*rec.HeadersMs + 300 + rng.ExpFloat64()*80)
			rec.Chunks = chunks
			at := *rec.TFCMs
			for range chunks - 1 {
				g := 30 + rng.ExpFloat64()*10
				at += g
				rec.Gaps.Values = append(rec.Gaps.Values, *ms(g))
			}
			rec.Gaps.Count = len(rec.Gaps.Values)
			if rec.Outcome == probe.Success {
				rec.TailMs = ms(at - *rec.TFCMs)
				rec.CloseMs = ms(rng.Float64() * 2)
			}
		}
		if err := enc.Encode(line{Record: rec, Region: regions[(i/12)%len(regions)], Host: "edge-1"}); err != nil {
			fmt.Fprintln(os.Stderr, "reportlog:", err)
			os.Exit(1)
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "reportlog:", err)
		os.Exit(1)
	}
}
