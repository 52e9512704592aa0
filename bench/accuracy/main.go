// Command accuracy measures how close streamprobe's timestamps are to what
// a server really sent: a loopback server streams an exact schedule (20
// events per second) and logs when each event was written; N concurrent
// probes measure it; the program reports the error of TFC and of every gap
// (measured minus sent) and the dispatch lag (server write -> event in the
// reduction) as p50 / p99 / max.
//
// The server shares the measured process by default; -server process puts
// it in a process of its own (this program, -serve; with -server-cpu
// pinned to that CPU by taskset, with -server-procs on that many
// processors), so the measured process holds the probes alone. On the
// 2-core reference machine that made the tail worse, not better
// (bench/README.md): the server's own send stamps then wait for a CPU too.
//
//	go run ./bench/accuracy -streams 1,100,500
//	go build -o acc ./bench/accuracy && taskset -c 1 ./acc -server process -server-cpu 0
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/probe"
)

// server streams the schedule on / (a stream per X-Request-Id) and gives
// the send times it logged on /sent, as Unix nanoseconds by request id.
type server struct {
	events   int
	interval time.Duration
	mu       sync.Mutex
	sent     map[string][]int64
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/sent" {
		s.mu.Lock()
		defer s.mu.Unlock()
		json.NewEncoder(w).Encode(s.sent)
		return
	}
	id := r.Header.Get("X-Request-Id")
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	f := w.(http.Flusher)
	f.Flush()
	sent := make([]int64, 0, s.events)
	start := time.Now()
	payload := `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" word"}}]}`
	for i := range s.events {
		due := start.Add(time.Duration(i+1) * s.interval)
		time.Sleep(time.Until(due))
		fmt.Fprintf(w, "id: %d\ndata: %s\n\n", i+1, payload)
		f.Flush()
		sent = append(sent, time.Now().UnixNano())
	}
	// Logged before the end marker goes out: a client that has it is done
	// and its stream is read at once.
	s.mu.Lock()
	s.sent[id] = sent
	s.mu.Unlock()
	fmt.Fprint(w, "data: [DONE]\n\n")
	f.Flush()
}

// source is where the streams come from: a server in this process or in
// a child process.
type source struct {
	url   string
	close func()
}

// sentTimes fetches the server's log of send times.
func (src source) sentTimes() (map[string][]int64, error) {
	resp, err := http.Get(src.url + "sent")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var sent map[string][]int64
	return sent, json.NewDecoder(resp.Body).Decode(&sent)
}

func inProcess(events int, interval time.Duration) (source, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return source{}, err
	}
	hs := &http.Server{Handler: &server{events: events, interval: interval, sent: map[string][]int64{}}}
	go hs.Serve(ln)
	return source{url: "http://" + ln.Addr().String() + "/", close: func() { hs.Close() }}, nil
}

// childProcess starts this program as the server (-serve) with one
// processor, pinned to cpu by taskset when cpu >= 0, and reads the
// address it listens on.
func childProcess(events int, interval time.Duration, cpu, procs int) (source, error) {
	self, err := os.Executable()
	if err != nil {
		return source{}, err
	}
	args := []string{self, "-serve", "-events", strconv.Itoa(events), "-interval", interval.String()}
	if cpu >= 0 {
		args = append([]string{"taskset", "-c", strconv.Itoa(cpu)}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = os.Environ()
	if procs > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(procs))
	}
	cmd.Stderr = os.Stderr
	// The child ends when its stdin does: a parent killed outright
	// leaves no server behind.
	if _, err := cmd.StdinPipe(); err != nil {
		return source{}, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return source{}, err
	}
	if err := cmd.Start(); err != nil {
		return source{}, fmt.Errorf("starting the server process: %w", err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		stop()
		return source{}, fmt.Errorf("the server process said %q: %v", line, err)
	}
	return source{url: "http://" + addr + "/", close: stop}, nil
}

// serve is the child: the server alone, until it is killed.
func serve(events int, interval time.Duration) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println("listening", ln.Addr())
	go func() {
		io.Copy(io.Discard, os.Stdin) // the parent is gone when stdin ends
		os.Exit(0)
	}()
	return http.Serve(ln, &server{events: events, interval: interval, sent: map[string][]int64{}})
}

type dist []float64

func (d dist) String() string {
	if len(d) == 0 {
		return "-"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	p := func(q float64) float64 { v, _ := probe.Percentile(s, q); return v }
	return fmt.Sprintf("p50 %7.3f  p99 %7.3f  max %7.3f", p(50), p(99), s[len(s)-1])
}

func run(src source, n, events int, interval, spread time.Duration) (tfcErr, gapErr, lag dist, failed int, err error) {
	target := dialect.Target{Name: "bench", URL: src.url, Dialect: "sse", EndData: "[DONE]"}
	client := probe.NewClient(target) // as the daemon builds it
	defer client.HTTP.CloseIdleConnections()
	results := make([]probe.Result, n)
	ids := make([]string, n)
	base := strconv.FormatInt(time.Now().UnixNano(), 36) // one server serves every block
	var wg sync.WaitGroup
	for i := range n {
		ids[i] = base + "-" + strconv.Itoa(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Streams start spread out, as independent clients would.
			time.Sleep(time.Duration(i) * spread / time.Duration(n))
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(events+20)*interval+10*time.Second)
			defer cancel()
			results[i] = probe.Run(ctx, target, probe.Options{Sample: dialect.Samples["short"], Client: client, RequestID: ids[i]})
		}()
	}
	wg.Wait()
	sentAll, err := src.sentTimes()
	if err != nil {
		return nil, nil, nil, 0, fmt.Errorf("the server's send times: %w", err)
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	for i, res := range results {
		sent := sentAll[ids[i]]
		if res.Record.Outcome != probe.Success || res.Timeline.ChunkCount() != len(sent) {
			failed++
			fmt.Fprintf(os.Stderr, "stream %d: %s %s (%d of %d chunks)\n", i, res.Record.Outcome, res.Record.Error, res.Timeline.ChunkCount(), len(sent))
			continue
		}
		// The gaps compare differences within each process; only the lag
		// reads the two processes' wall clocks against each other.
		for k := range sent {
			got := res.Timeline.Chunk(k)
			l := ms(time.Duration(got.UnixNano() - sent[k]))
			lag = append(lag, l)
			if k == 0 {
				tfcErr = append(tfcErr, math.Abs(l))
				continue
			}
			gotGap := got.Sub(res.Timeline.Chunk(k - 1))
			gapErr = append(gapErr, math.Abs(ms(gotGap-time.Duration(sent[k]-sent[k-1]))))
		}
	}
	return tfcErr, gapErr, lag, failed, nil
}

func main() {
	streams := flag.String("streams", "1,100,500", "comma-separated numbers of concurrent streams")
	events := flag.Int("events", 20, "events per stream")
	rate := flag.Int("rate", 20, "events per second per stream")
	spread := flag.Duration("spread", time.Second, "the streams' starts are spread over this long")
	where := flag.String("server", "inproc", "where the server runs: inproc (in the measured process) or process (a child process of its own)")
	cpu := flag.Int("server-cpu", -1, "pin the server process to this CPU with taskset (-1: no pinning)")
	procs := flag.Int("server-procs", 0, "GOMAXPROCS of the server process (0: Go's default, every CPU)")
	serveOnly := flag.Bool("serve", false, "be the server only (the child process)")
	interval := flag.Duration("interval", 0, "with -serve: the interval between events")
	flag.Parse()
	if *serveOnly {
		if err := serve(*events, *interval); err != nil {
			fmt.Fprintln(os.Stderr, "accuracy -serve:", err)
			os.Exit(1)
		}
		return
	}
	if err := measure(*streams, *events, *rate, *spread, *where, *cpu, *procs); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(1)
	}
}

func measure(streams string, events, rate int, spread time.Duration, where string, cpu, procs int) error {
	var ns []int
	for _, f := range strings.Split(streams, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-streams %q: want positive numbers", streams)
		}
		ns = append(ns, n)
	}
	if rate < 1 || events < 1 {
		return errors.New("-rate and -events: want positive numbers")
	}
	interval := time.Second / time.Duration(rate)
	var src source
	var err error
	switch where {
	case "process":
		src, err = childProcess(events, interval, cpu, procs)
	case "inproc":
		src, err = inProcess(events, interval)
	default:
		return fmt.Errorf("-server %q: want process or inproc", where)
	}
	if err != nil {
		return err
	}
	defer src.close()
	place := "server and probes in one process"
	if where == "process" {
		place = "the server in a process of its own"
		if cpu >= 0 {
			place += fmt.Sprintf(" on CPU %d", cpu)
		}
		if procs > 0 {
			place += fmt.Sprintf(" (GOMAXPROCS=%d)", procs)
		}
	}
	fmt.Printf("accuracy: %d events per stream at %d/s, starts spread over %s, loopback, %s; ms\n", events, rate, spread, place)
	for _, n := range ns {
		rt0 := rtRead()
		tfc, gap, lag, failed, err := run(src, n, events, interval, spread)
		rt := rtRead().since(rt0)
		if err != nil {
			return err
		}
		fmt.Printf("%4d streams  |TFC error| %s\n", n, tfc)
		fmt.Printf("              |gap error| %s\n", gap)
		fmt.Printf("              dispatch lag %s   (failed streams: %d)\n", lag, failed)
		fmt.Printf("              %s\n", rt)
	}
	return nil
}
