// Command server runs github.com/mark3labs/mcp-go as a real MCP peer for
// streamprobe's mcp dialect tests: the library's StreamableHTTPServer with
// its InMemoryEventStore and task support, and the same `progress` tool as
// the SDK peers (package mcppeer). It is a module of its own so that two
// versions of the library can be pinned: go.mod holds v1.2.1 (2026-07-28
// and tasks), v058.mod v0.58.0 (2025-11-25), built with -modfile=v058.mod.
// The package mcpgo beside it builds and starts it; nothing of it reaches
// the streamprobe binary.
//
// It listens on 127.0.0.1 (port 0: any), prints {"port":N} on stdout,
// serves the MCP endpoint at /mcp and exits when its stdin ends. ?store=0
// on the URL serves without an event store. GET /log answers every HTTP
// exchange so far as the other peers do (mcppeer.Exchange), and the end of
// each tool call (method TOOL, rpc "done" or "cancelled").
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/mark3labs/mcp-go/server"
)

func main() {
	rec := &recorder{}
	s := newServer(rec)
	withStore := server.NewStreamableHTTPServer(s, server.WithEventStore(server.NewInMemoryEventStore()))
	noStore := server.NewStreamableHTTPServer(s)
	mux := http.NewServeMux()
	mux.Handle("/mcp", rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("store") == "0" {
			noStore.ServeHTTP(w, r)
			return
		}
		withStore.ServeHTTP(w, r)
	})))
	mux.HandleFunc("GET /log", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(rec.log())
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("{\"port\":%d}\n", ln.Addr().(*net.TCPAddr).Port)
	go func() {
		// The test closed our stdin: stop.
		bufio.NewReader(os.Stdin).WriteTo(discard{})
		os.Exit(0)
	}()
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
