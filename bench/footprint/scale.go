package main

import (
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// scale runs the daemon binary with n targets x 3 samples (short, long,
// cancel) every minute against the reference target at addr, spread by a
// jitter of the whole minute so the long streams overlap, and reports, over
// window, its peak RSS (sampled every second), its CPU, the runs it made
// and the p99 and max of its schedule lag (streamprobe_schedule_lag_seconds
// from its /metrics: from when a run came due to when it got its slot).
func scale(bin, dir, addr string, n, maxConcurrent int, window time.Duration) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "listen = %q\nmax_concurrent = %d\n[log]\nlevel = \"warn\"\nformat = \"text\"\n", listen, maxConcurrent)
	for i := range n {
		fmt.Fprintf(&cfg, "[[target]]\nname = \"t%03d\"\nurl = \"http://%s\"\ndialect = \"openai-chat\"\nsamples = [\"short\", \"long\", \"cancel\"]\nevery = \"1m\"\njitter = \"59s\"\n", i, addr)
	}
	cfgPath := filepath.Join(dir, "scale.toml")
	os.WriteFile(cfgPath, []byte(cfg.String()), 0o644)
	d := exec.Command(bin, "run", "-config", cfgPath)
	d.Stderr = os.Stderr
	if err := d.Start(); err != nil {
		panic(err)
	}
	defer func() {
		d.Process.Signal(syscall.SIGTERM)
		d.Wait()
	}()
	start := time.Now()
	peak := 0
	_, cpu0 := procStat(d.Process.Pid)
	for time.Since(start) < window {
		time.Sleep(time.Second)
		if rss, _ := procStat(d.Process.Pid); rss > peak {
			peak = rss
		}
	}
	_, cpu1 := procStat(d.Process.Pid)
	resp, err := http.Get("http://" + listen + "/metrics")
	if err != nil {
		fmt.Fprintf(os.Stderr, "footprint: /metrics: %v\n", err)
		os.Exit(1)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p99, maxLag, runs := lagQuantiles(string(body))
	fmt.Printf("daemon at scale (%d targets x 3 samples every 1m, jitter 59s, max_concurrent %d, %s): peak RSS %.1f MiB, CPU %.1f%% of a core, %d runs, schedule lag p99 <= %.2f ms, max <= %.2f ms\n",
		n, maxConcurrent, window, float64(peak)/1024, 100*float64(cpu1-cpu0)/float64(window), runs, p99*1000, maxLag*1000)
}

// lagQuantiles reads the schedule lag histogram of a /metrics page
// (VictoriaMetrics vmrange buckets, summed over every job) and returns the
// upper bounds of the buckets holding its p99 and its max, and the count.
func lagQuantiles(page string) (p99, maxLag float64, count int) {
	buckets := map[float64]float64{}
	for _, l := range strings.Split(page, "\n") {
		if !strings.HasPrefix(l, "streamprobe_schedule_lag_seconds_bucket{") {
			continue
		}
		i := strings.Index(l, `vmrange="`)
		if i < 0 {
			continue
		}
		r := l[i+len(`vmrange="`):]
		r = r[:strings.IndexByte(r, '"')]
		hi, err := strconv.ParseFloat(r[strings.Index(r, "...")+3:], 64)
		if err != nil {
			continue
		}
		v, _ := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		buckets[hi] += v
	}
	his := make([]float64, 0, len(buckets))
	total := 0.0
	for hi, v := range buckets {
		his = append(his, hi)
		total += v
	}
	sort.Float64s(his)
	acc := 0.0
	p99 = math.NaN()
	for _, hi := range his {
		acc += buckets[hi]
		if math.IsNaN(p99) && acc >= 0.99*total {
			p99 = hi
		}
		if buckets[hi] > 0 {
			maxLag = hi
		}
	}
	return p99, maxLag, int(total)
}
