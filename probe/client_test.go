package probe

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

// By default every run opens a fresh connection and pays for it in
// connect_ms (and tls_ms); with keep_alive the second run reuses the first
// one's connection, and its setup times are absent, not zero.
func TestConnectionPolicy(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name             string
		keepAlive, http2 bool
		conns            int64
		version          string
	}{
		{"fresh connection per run (default)", false, false, 2, "1.1"},
		{"keep_alive", true, false, 1, "1.1"},
		{"http2", false, true, 2, "2.0"},
		{"keep_alive and http2", true, true, 1, "2.0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var conns atomic.Int64
			ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: a\n\ndata: b\n\ndata: [DONE]\n\n")
			}))
			ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			ts.EnableHTTP2 = true // offered; taken only with http2
			ts.StartTLS()
			t.Cleanup(ts.Close)
			tg := dialect.Target{Name: "t", URL: ts.URL, Dialect: "sse", EndData: "[DONE]", InsecureSkipVerify: true, KeepAlive: tt.keepAlive, HTTP2: tt.http2}
			c := NewClient(tg)
			t.Cleanup(c.HTTP.CloseIdleConnections)
			var recs []Record
			for range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
				recs = append(recs, Run(ctx, tg, Options{Sample: dialect.Samples["short"], Client: c}).Record)
				cancel()
			}
			for i, r := range recs {
				if r.Outcome != Success {
					t.Fatalf("run %d: %s %s", i, r.Outcome, r.Error)
				}
				if r.HTTPVersion != tt.version {
					t.Errorf("run %d: http_version %q, want %q", i, r.HTTPVersion, tt.version)
				}
			}
			if n := conns.Load(); n != tt.conns {
				t.Errorf("%d connections for 2 runs, want %d", n, tt.conns)
			}
			if recs[0].ConnectMs == nil || recs[0].TLSMs == nil || recs[0].DNSMs != nil {
				t.Errorf("first run: connect %v tls %v dns %v (an IP address needs no DNS)", reftest.Shown(recs[0].ConnectMs), reftest.Shown(recs[0].TLSMs), reftest.Shown(recs[0].DNSMs))
			}
			second := recs[1].ConnectMs != nil && recs[1].TLSMs != nil
			if second == tt.keepAlive {
				t.Errorf("second run: connect %v tls %v with keep_alive %v", reftest.Shown(recs[1].ConnectMs), reftest.Shown(recs[1].TLSMs), tt.keepAlive)
			}
		})
	}
}

// A response header over 1 MiB ends the run on every connection path, the
// lean transport's and net/http's (keep-alive, HTTP/2): net/http's own
// limit is 10 MB. Over HTTP/1.1 the error names the header; over HTTP/2
// net/http's client answers the header list over the size it advertised
// with a connection PROTOCOL_ERROR, an error of an unexported type that
// says no more (docs/record.md).
func TestResponseHeaderLimitOnEveryPath(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 40 {
			w.Header().Set(fmt.Sprintf("X-Big-%d", i), strings.Repeat("b", 40<<10)) // 1.6 MB in all
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: a\n\ndata: [DONE]\n\n")
	}))
	ts.EnableHTTP2 = true
	ts.Config.MaxHeaderBytes = 8 << 20
	ts.StartTLS()
	t.Cleanup(ts.Close)
	for _, tt := range []struct {
		name             string
		keepAlive, http2 bool
	}{{"fresh", false, false}, {"keep_alive", true, false}, {"http2", false, true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tg := dialect.Target{Name: "t", URL: ts.URL, Dialect: "sse", EndData: "[DONE]", InsecureSkipVerify: true, KeepAlive: tt.keepAlive, HTTP2: tt.http2}
			c := NewClient(tg)
			t.Cleanup(c.HTTP.CloseIdleConnections)
			ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
			defer cancel()
			rec := Run(ctx, tg, Options{Sample: dialect.Samples["short"], Client: c}).Record
			named := strings.Contains(rec.Error, "header") && strings.Contains(rec.Error, "1048576 bytes")
			if tt.http2 {
				named = strings.Contains(rec.Error, "PROTOCOL_ERROR")
			}
			if rec.Outcome != UpstreamError || !named || rec.HeadersMs != nil {
				t.Errorf("outcome %s, error %q, headers_ms %v", rec.Outcome, rec.Error, reftest.Shown(rec.HeadersMs))
			}
		})
	}
}
