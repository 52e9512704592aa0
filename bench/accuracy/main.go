// Command accuracy measures how close streamprobe's timestamps are to what
// a server really sent: a loopback server streams an exact schedule (20
// events per second) and logs when each event was written; N concurrent
// probes measure it; the program reports the error of TFC and of every gap
// (measured minus sent) and the dispatch lag (server write -> event in the
// reduction) as p50 / p99 / max.
//
//	go run ./bench/accuracy -streams 1,100,500
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/probe"
)

type server struct {
	events   int
	interval time.Duration
	mu       sync.Mutex
	sent     map[string][]time.Time
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-Id")
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	f := w.(http.Flusher)
	f.Flush()
	sent := make([]time.Time, 0, s.events)
	start := time.Now()
	payload := `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" word"}}]}`
	for i := range s.events {
		due := start.Add(time.Duration(i+1) * s.interval)
		time.Sleep(time.Until(due))
		fmt.Fprintf(w, "id: %d\ndata: %s\n\n", i+1, payload)
		f.Flush()
		sent = append(sent, time.Now())
	}
	// Logged before the end marker goes out: a client that has it is done
	// and its stream is read at once.
	s.mu.Lock()
	s.sent[id] = sent
	s.mu.Unlock()
	fmt.Fprint(w, "data: [DONE]\n\n")
	f.Flush()
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

func run(n, events int, interval, spread time.Duration) (tfcErr, gapErr, lag dist, failed int, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, nil, 0, err
	}
	srv := &server{events: events, interval: interval, sent: map[string][]time.Time{}}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer hs.Close()
	target := probe.Target{Name: "bench", URL: "http://" + ln.Addr().String() + "/", Dialect: "sse", EndData: "[DONE]"}
	client := probe.NewClient(target) // as the daemon builds it
	defer client.HTTP.CloseIdleConnections()
	results := make([]probe.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Streams start spread out, as independent clients would.
			time.Sleep(time.Duration(i) * spread / time.Duration(n))
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(events+20)*interval+10*time.Second)
			defer cancel()
			results[i] = probe.Run(ctx, target, probe.Options{Sample: probe.Samples["short"], Client: client, RequestID: strconv.Itoa(i)})
		}()
	}
	wg.Wait()
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for i, res := range results {
		sent := srv.sent[strconv.Itoa(i)]
		got := res.Timeline.Chunks()
		if res.Record.Outcome != probe.Success || len(got) != len(sent) {
			failed++
			fmt.Fprintf(os.Stderr, "stream %d: %s %s (%d of %d chunks)\n", i, res.Record.Outcome, res.Record.Error, len(got), len(sent))
			continue
		}
		tfcErr = append(tfcErr, math.Abs(ms(got[0].Sub(sent[0]))))
		for k := range got {
			lag = append(lag, ms(got[k].Sub(sent[k])))
			if k > 0 {
				gapErr = append(gapErr, math.Abs(ms(got[k].Sub(got[k-1])-sent[k].Sub(sent[k-1]))))
			}
		}
	}
	return tfcErr, gapErr, lag, failed, nil
}

func main() {
	streams := flag.String("streams", "1,100,500", "comma-separated numbers of concurrent streams")
	events := flag.Int("events", 20, "events per stream")
	rate := flag.Int("rate", 20, "events per second per stream")
	spread := flag.Duration("spread", time.Second, "the streams' starts are spread over this long")
	flag.Parse()
	interval := time.Second / time.Duration(*rate)
	fmt.Printf("accuracy: %d events per stream at %d/s, starts spread over %s, loopback, server and probes in one process; ms\n", *events, *rate, *spread)
	for _, f := range strings.Split(*streams, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "accuracy: -streams %q: want positive numbers\n", *streams)
			os.Exit(2)
		}
		rt0 := rtRead()
		tfc, gap, lag, failed, err := run(n, *events, interval, *spread)
		rt := rtRead().since(rt0)
		if err != nil {
			fmt.Fprintln(os.Stderr, "accuracy:", err)
			os.Exit(1)
		}
		fmt.Printf("%4d streams  |TFC error| %s\n", n, tfc)
		fmt.Printf("              |gap error| %s\n", gap)
		fmt.Printf("              dispatch lag %s   (failed streams: %d)\n", lag, failed)
		fmt.Printf("              %s\n", rt)
	}
}
