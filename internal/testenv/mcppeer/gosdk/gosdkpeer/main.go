// Command gosdkpeer runs the Go SDK peer (package gosdk) by hand, as the
// tests run it in process: `go run ./internal/testenv/mcppeer/gosdk/gosdkpeer`
// for the 2025-11-25 peer (sessions, MemoryEventStore), with -stateless
// for the 2026-07-28 one (Stateless = true). It listens on 127.0.0.1
// (-addr, default any port), prints {"port":N}, serves /mcp and its log at
// /log, and exits when its stdin ends (Ctrl-D).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer/gosdk"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	stateless := flag.Bool("stateless", false, "the 2026-07-28 peer: Stateless = true (?cancel=1 sets PropagateRequestCancellation)")
	flag.Parse()
	rec := &mcppeer.Recorder{}
	h := gosdk.Handler(rec)
	if *stateless {
		h = gosdk.StatelessHandler(rec)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", rec.Wrap(h))
	mux.HandleFunc("GET /log", func(w http.ResponseWriter, _ *http.Request) {
		log, _ := rec.Log()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(log)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("{\"port\":%d}\n", ln.Addr().(*net.TCPAddr).Port)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	fmt.Fprintln(os.Stderr, http.Serve(ln, mux))
	os.Exit(1)
}
