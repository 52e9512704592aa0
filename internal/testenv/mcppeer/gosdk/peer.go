// Package gosdk runs the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk) as a real peer over loopback:
// its StreamableHTTPHandler with its MemoryEventStore, and the same
// `progress` tool as the TypeScript peer (see package mcppeer). Only tests
// import it, so the streamprobe binary does not link the SDK.
package gosdk

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
)

// ProgressArgs are the progress tool's arguments.
type ProgressArgs struct {
	Steps      *int   `json:"steps,omitempty" jsonschema:"how many progress reports (default 5)"`
	IntervalMS *int   `json:"interval_ms,omitempty" jsonschema:"ms before each report (default 50)"`
	CloseAfter int    `json:"close_after,omitempty" jsonschema:"close the SSE stream (SEP-1699) after this many reports; 0 never"`
	RetryMS    int    `json:"retry_ms,omitempty" jsonschema:"the retry: the close event asks for, in ms; 0 none"`
	Text       string `json:"text,omitempty" jsonschema:"the answer's text (default done)"`
}

// NewServer is the Go SDK server with the progress tool, which logs its
// ends to rec (nil: not logged).
func NewServer(rec *mcppeer.Recorder) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "streamprobe-mcppeer-go", Version: "1.0.0"}, nil)
	tool := func(ctx context.Context, req *mcp.CallToolRequest, in ProgressArgs) (*mcp.CallToolResult, any, error) {
		res, err := progress(ctx, req, in)
		if rec != nil {
			text := in.Text
			if text == "" {
				text = "done"
			}
			rec.ToolDone(req.Session.ID(), text, err != nil)
		}
		return res, nil, err
	}
	mcp.AddTool(s, &mcp.Tool{Name: mcppeer.Tool, Description: "Reports progress steps times, one every interval_ms, then answers; after close_after reports it closes its SSE stream (SEP-1699) and goes on."}, tool)
	return s
}

func progress(ctx context.Context, req *mcp.CallToolRequest, in ProgressArgs) (*mcp.CallToolResult, error) {
	count, interval := mcppeer.DefaultSteps, mcppeer.DefaultInterval
	if in.Steps != nil {
		count = *in.Steps
	}
	if in.IntervalMS != nil {
		interval = time.Duration(*in.IntervalMS) * time.Millisecond
	}
	text := in.Text
	if text == "" {
		text = "done"
	}
	token := req.Params.GetProgressToken()
	for i := 1; i <= count; i++ {
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		if token != nil {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(i), Total: float64(count), Message: fmt.Sprintf("step %d of %d", i, count),
			})
			if err != nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
		if i == in.CloseAfter && req.Extra != nil && req.Extra.CloseSSEStream != nil {
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: time.Duration(in.RetryMS) * time.Millisecond})
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: %d steps", text, count)}}}, nil
}

// Handler is the peer's endpoint: the SDK's StreamableHTTPHandler with a
// MemoryEventStore, or per the request's query without one (?store=0) or
// answering application/json (?json=1).
func Handler(rec *mcppeer.Recorder) http.Handler {
	get := func(*http.Request) *mcp.Server { return NewServer(rec) }
	withStore := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
	noStore := mcp.NewStreamableHTTPHandler(get, nil)
	jsonMode := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{JSONResponse: true, EventStore: mcp.NewMemoryEventStore(nil)})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch q := r.URL.Query(); {
		case q.Get("json") == "1":
			jsonMode.ServeHTTP(w, r)
		case q.Get("store") == "0":
			noStore.ServeHTTP(w, r)
		default:
			withStore.ServeHTTP(w, r)
		}
	})
}

// Start runs the Go SDK peer on a loopback port for the test; cleanup
// stops it.
func Start(t testing.TB) *mcppeer.Peer {
	t.Helper()
	rec := &mcppeer.Recorder{}
	mux := http.NewServeMux()
	mux.Handle("/mcp", rec.Wrap(Handler(rec)))
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return &mcppeer.Peer{Name: "go-sdk", URL: srv.URL + "/mcp", Log: rec.Log}
}
