// Command footprint measures what streamprobe costs to run:
//
//   - idle: the real daemon binary with 20 targets x 3 samples on 1-minute
//     schedules, against a reference target in another process: resident
//     memory and CPU while idle between runs;
//
//   - streams: K live streams at 20 events/s in one probe process: memory
//     and CPU per stream;
//
//   - the binary's size;
//
//   - with -scale N instead of idle and streams: the daemon with N targets
//     x 3 samples every minute, jitter 59 s (long streams overlapping):
//     peak RSS, CPU and the p99 of its schedule lag.
//
//     go run ./bench/footprint            (about 80 s)
//     go run ./bench/footprint -scale 200 (about 3 min)
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/probe"
)

// endless streams one event every interval until the client goes away.
func endless(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	f.Flush()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
			fmt.Fprintf(w, "id: %d\ndata: {\"choices\":[{\"delta\":{\"content\":\" word\"}}]}\n\n", i)
			f.Flush()
		}
	}
}

// serve runs in the child process: the reference target, away from the
// measured process.
func serve(addrFile string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := builtin.NewServer()
	mux := http.NewServeMux()
	mux.HandleFunc("/live/v1/chat/completions", endless)
	srv.KeepConns = 16
	mux.Handle("/", srv.Handler())
	os.WriteFile(addrFile, []byte(ln.Addr().String()), 0o644)
	http.Serve(ln, mux)
}

func procStat(pid int) (rssKiB int, cpu time.Duration) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			rssKiB, _ = strconv.Atoi(f[1])
		}
	}
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(st)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.Atoi(f[11])
	stt, _ := strconv.Atoi(f[12])
	return rssKiB, time.Duration(ut+stt) * time.Second / 100 // USER_HZ
}

func main() {
	serveFlag := flag.String("serve", "", "internal: run the reference target, writing its address to this file")
	streams := flag.Int("streams", 200, "live streams for the per-stream measurement")
	idle := flag.Duration("idle", 40*time.Second, "idle window to measure the daemon over")
	scaleN := flag.Int("scale", 0, "instead: run the daemon with this many targets x 3 samples every minute and report its RSS and schedule lag")
	scaleConc := flag.Int("max-concurrent", 64, "with -scale: the daemon's max_concurrent")
	scaleWindow := flag.Duration("window", 3*time.Minute, "with -scale: how long to measure")
	flag.Parse()
	if *serveFlag != "" {
		serve(*serveFlag)
		return
	}
	dir, _ := os.MkdirTemp("", "footprint")
	defer os.RemoveAll(dir)
	addrFile := filepath.Join(dir, "addr")
	self, _ := os.Executable()
	child := exec.Command(self, "-serve", addrFile)
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		panic(err)
	}
	defer child.Process.Kill()
	var addr string
	for range 100 {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			addr = string(b)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The binary.
	bin := filepath.Join(dir, "streamprobe")
	stripped := filepath.Join(dir, "streamprobe-stripped")
	for _, b := range [][]string{{"build", "-o", bin, "./cmd/streamprobe"}, {"build", "-ldflags=-s -w", "-trimpath", "-o", stripped, "./cmd/streamprobe"}} {
		if out, err := exec.Command("go", b...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go %v: %v\n%s", b, err, out)
			os.Exit(1)
		}
	}
	st1, _ := os.Stat(bin)
	st2, _ := os.Stat(stripped)
	fmt.Printf("binary: %.1f MiB (go build), %.1f MiB (-ldflags='-s -w' -trimpath)\n", float64(st1.Size())/(1<<20), float64(st2.Size())/(1<<20))
	if *scaleN > 0 {
		scale(stripped, dir, addr, *scaleN, *scaleConc, *scaleWindow)
		return
	}

	// The idle daemon: 20 targets x 3 samples, every minute.
	var cfg strings.Builder
	cfg.WriteString("[log]\nlevel = \"warn\"\nformat = \"text\"\n")
	for i := range 20 {
		fmt.Fprintf(&cfg, "[[target]]\nname = \"t%02d\"\nurl = \"http://%s\"\ndialect = \"openai-chat\"\nsamples = [\"short\", \"long\", \"cancel\"]\nevery = \"1m\"\njitter = \"5s\"\n", i, addr)
	}
	cfgPath := filepath.Join(dir, "probe.toml")
	os.WriteFile(cfgPath, []byte(cfg.String()), 0o644)
	d := exec.Command(stripped, "run", "-config", cfgPath)
	d.Stderr = os.Stderr
	if err := d.Start(); err != nil {
		panic(err)
	}
	// The first round of 60 runs starts within the 5 s jitter and takes
	// about 2 s; the idle window starts after it and ends before the next.
	time.Sleep(12 * time.Second)
	rss0, cpu0 := procStat(d.Process.Pid)
	time.Sleep(*idle)
	rss1, cpu1 := procStat(d.Process.Pid)
	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
	fmt.Printf("idle daemon (20 targets x 3 samples, 1m): RSS %.1f MiB (%.1f at the start of the window), CPU %.3f%% of a core over %s\n",
		float64(rss1)/1024, float64(rss0)/1024, 100*float64(cpu1-cpu0)/float64(*idle), *idle)

	// Live streams in this process.
	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	rssBefore, cpuBefore := procStat(os.Getpid())
	target := dialect.Target{Name: "s", URL: "http://" + addr + "/live", Dialect: "openai-chat"}
	client := probe.NewClient(target) // as the daemon builds it
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
	var wg sync.WaitGroup
	var events atomic.Int64
	for range *streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := probe.Run(ctx, target, probe.Options{Sample: dialect.Samples["long"], Client: client})
			events.Add(int64(res.Record.Chunks))
		}()
	}
	time.Sleep(4 * time.Second) // all connected and streaming
	runtime.GC()
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	rssMid, cpuMid := procStat(os.Getpid())
	time.Sleep(6 * time.Second)
	_, cpuEnd := procStat(os.Getpid())
	cancel()
	wg.Wait()
	if live := events.Load(); live < int64(*streams)*100 {
		fmt.Fprintf(os.Stderr, "footprint: only %d events arrived: the streams were not live\n", live)
		os.Exit(1)
	}
	client.HTTP.CloseIdleConnections()
	heap := float64(m1.HeapInuse+m1.StackInuse) - float64(m0.HeapInuse+m0.StackInuse)
	fmt.Printf("live streams (%d at 20 events/s, openai-chat): heap+stacks %.1f KiB per stream, RSS %.1f KiB per stream, CPU %.3f%% of a core per stream\n",
		*streams, heap/1024/float64(*streams), float64(rssMid-rssBefore)/float64(*streams),
		100*float64(cpuEnd-cpuMid)/float64(6*time.Second)/float64(*streams))
	_ = cpuBefore
}
