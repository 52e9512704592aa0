package probe

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

// fault runs the short sample against handler and returns the record.
func fault(t *testing.T, tg dialect.Target, h http.HandlerFunc, timeout time.Duration, tls bool) Record {
	t.Helper()
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	if tg.URL == "" {
		tg.URL = srv.URL
	} else {
		tg.URL = srv.URL + tg.URL
	}
	if tg.Dialect == "" {
		tg.Dialect, tg.EndData = "sse", "[DONE]"
	}
	if tg.Name == "" {
		tg.Name = "fault"
	}
	return runProbe(t, tg, "short", timeout).Record
}

func sseHeaders(w http.ResponseWriter) http.Flusher {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	f.Flush()
	return f
}

func wantOutcome(t *testing.T, rec Record, o Outcome, errHas ...string) {
	t.Helper()
	if rec.Outcome != o {
		t.Fatalf("outcome %s (%s), want %s", rec.Outcome, rec.Error, o)
	}
	for _, s := range errHas {
		if !strings.Contains(rec.Error, s) {
			t.Errorf("error %q lacks %q", rec.Error, s)
		}
	}
	if strings.ContainsAny(rec.Error, "\n\r") {
		t.Errorf("error is not one line: %q", rec.Error)
	}
}

func TestFaultMatrix(t *testing.T) {
	t.Parallel()
	t.Run("DNS failure", func(t *testing.T) {
		t.Parallel()
		// A resolver that asks a DNS port on loopback where nothing
		// listens: a real lookup failure, with no traffic off the host.
		dead, _ := net.ListenPacket("udp", "127.0.0.1:0")
		addr := dead.LocalAddr().String()
		dead.Close()
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", addr)
		}}
		tr := &http.Transport{DialContext: (&net.Dialer{Resolver: r}).DialContext}
		defer tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
		defer cancel()
		c := reftest.NewClient(t)
		c.HTTP.Transport = tr
		rec := Run(ctx, dialect.Target{Name: "dns", URL: "http://streamprobe-no-such-host.invalid/x", Dialect: "sse"}, Options{Sample: dialect.Samples["short"], Client: c}).Record
		wantOutcome(t, rec, UpstreamError, "lookup streamprobe-no-such-host.invalid")
	})
	t.Run("TLS unknown authority, verification on", func(t *testing.T) {
		t.Parallel()
		rec := fault(t, dialect.Target{}, func(w http.ResponseWriter, r *http.Request) { sseHeaders(w) }, reftest.RunDeadline, true)
		wantOutcome(t, rec, UpstreamError, "certificate")
	})
	t.Run("TLS unknown authority, insecure_skip_verify", func(t *testing.T) {
		t.Parallel()
		rec := fault(t, dialect.Target{InsecureSkipVerify: true}, func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			io.WriteString(w, "data: a\n\ndata: [DONE]\n\n")
		}, reftest.RunDeadline, true)
		wantOutcome(t, rec, Success)
	})
	t.Run("429 with Retry-After", func(t *testing.T) {
		t.Parallel()
		rec := fault(t, dialect.Target{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "30")
			http.Error(w, "rate limited", http.StatusTooManyRequests)
		}, reftest.RunDeadline, false)
		wantOutcome(t, rec, UpstreamError, "429", "rate limited")
		if rec.HTTPStatus != 429 || rec.RetryAfterMs == nil || *rec.RetryAfterMs != 30000 {
			t.Errorf("status %d retry_after_ms %v", rec.HTTPStatus, reftest.Shown(rec.RetryAfterMs))
		}
	})
	t.Run("503", func(t *testing.T) {
		t.Parallel()
		rec := fault(t, dialect.Target{}, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) }, reftest.RunDeadline, false)
		wantOutcome(t, rec, UpstreamError, "503 Service Unavailable")
	})
	resetMidEvent := func(w http.ResponseWriter, r *http.Request) {
		f := sseHeaders(w)
		io.WriteString(w, "id: 1\ndata: one\n\nid: 2\ndata: tw")
		f.Flush()
		panic(http.ErrAbortHandler)
	}
	t.Run("reset mid-event, resume off", func(t *testing.T) {
		t.Parallel()
		rec := fault(t, dialect.Target{NoResume: true}, resetMidEvent, reftest.RunDeadline, false)
		wantOutcome(t, rec, UpstreamError, "connection broken mid-stream", "after 1 content chunks")
		if rec.Truncated != 1 || rec.LastEventID != "1" || rec.Chunks != 1 || rec.Resumed || rec.ServerDrops != 0 {
			t.Errorf("truncated %d last id %q chunks %d resumed %v server_drops %d", rec.Truncated, rec.LastEventID, rec.Chunks, rec.Resumed, rec.ServerDrops)
		}
	})
	// Resumed by default: every connection replays id 1 and breaks again,
	// so the probe gives up after the bounded reconnects and names the
	// replay.
	t.Run("reset mid-event on every connection", func(t *testing.T) {
		t.Parallel()
		rec := fault(t, dialect.Target{}, resetMidEvent, reftest.RunDeadline, false)
		wantOutcome(t, rec, UpstreamError, "connection broken mid-stream", "gave up after 5 reconnects")
		if rec.Truncated != 6 || rec.ServerDrops != 6 || rec.Reconnects != 5 || rec.LastEventIDSent != "1" || rec.Chunks != 1 {
			t.Errorf("truncated %d server_drops %d reconnects %d sent %q chunks %d", rec.Truncated, rec.ServerDrops, rec.Reconnects, rec.LastEventIDSent, rec.Chunks)
		}
		if rec.Verdict != VerdictDuplicate || !strings.Contains(rec.ResumeDetail, "replayed id 1 again") {
			t.Errorf("verdict %s (%s)", rec.Verdict, rec.ResumeDetail)
		}
	})
	t.Run("trickle of one byte per second", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		rec := fault(t, dialect.Target{}, func(w http.ResponseWriter, r *http.Request) {
			f := sseHeaders(w)
			for _, b := range []byte("data: slow\n\n") {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(time.Second):
				}
				w.Write([]byte{b})
				f.Flush()
			}
		}, 1500*time.Millisecond, false)
		wantOutcome(t, rec, Timeout, "timeout: no first chunk within 1.5")
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("the timeout fired after %v", d)
		}
	})
	t.Run("endless stream hits the max duration", func(t *testing.T) {
		t.Parallel()
		rec := fault(t, dialect.Target{}, func(w http.ResponseWriter, r *http.Request) {
			f := sseHeaders(w)
			for i := 0; ; i++ {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(10 * time.Millisecond):
				}
				fmt.Fprintf(w, "id: %d\ndata: %d\n\n", i, i)
				f.Flush()
			}
		}, time.Second, false)
		wantOutcome(t, rec, Timeout, "timeout: no end marker within 1s")
		if rec.Chunks < 1 { // as many as a busy machine let the server write
			t.Errorf("chunks %d", rec.Chunks)
		}
	})
	t.Run("event larger than the max event size", func(t *testing.T) {
		t.Parallel()
		rec := fault(t, dialect.Target{MaxEventSize: 64 << 10}, func(w http.ResponseWriter, r *http.Request) {
			f := sseHeaders(w)
			io.WriteString(w, "data: "+strings.Repeat("x", 1<<20)+"\n\n")
			f.Flush()
		}, reftest.RunDeadline, false)
		wantOutcome(t, rec, ProtocolError, "event larger than the limit", "65536 bytes")
		if rec.Bytes > 256<<10 {
			t.Errorf("read %d bytes past a 64 KiB limit", rec.Bytes)
		}
	})
	t.Run("malformed JSON in an openai-chat chunk", func(t *testing.T) {
		t.Parallel()
		rec := fault(t, dialect.Target{Dialect: "openai-chat"}, func(w http.ResponseWriter, r *http.Request) {
			sseHeaders(w)
			io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {\"choices\": [oops\n\n")
		}, reftest.RunDeadline, false)
		wantOutcome(t, rec, ProtocolError, "openai-chat: chunk is not valid JSON")
		if strings.Contains(rec.Error, "oops") {
			t.Errorf("the error quotes response content: %q", rec.Error)
		}
	})
	t.Run("gzip-encoded stream", func(t *testing.T) {
		t.Parallel()
		rec := fault(t, dialect.Target{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(200)
			zw := gzip.NewWriter(w)
			for i := range 5 {
				fmt.Fprintf(zw, "id: %d\ndata: chunk %d\n\n", i, i)
				zw.Flush()
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
			}
			// A second before the end: a client that waits for more
			// compressed input before it hands out an event reads the
			// first chunk and the end marker together.
			time.Sleep(time.Second)
			io.WriteString(zw, "data: [DONE]\n\n")
			zw.Close()
		}, 5*time.Second, false)
		wantOutcome(t, rec, Success)
		if rec.Chunks != 5 || rec.TFCMs == nil || rec.EndMs == nil || *rec.EndMs-*rec.TFCMs < 500 {
			t.Errorf("chunks %d, tfc_ms %v, end_ms %v: the gzip stream was not read event by event", rec.Chunks, reftest.Shown(rec.TFCMs), reftest.Shown(rec.EndMs))
		}
	})
	t.Run("redirects", func(t *testing.T) {
		t.Parallel()
		h := func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/old":
				http.Redirect(w, r, "/new", http.StatusFound)
			case "/old-post":
				http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
			default:
				body, _ := io.ReadAll(r.Body)
				sseHeaders(w)
				fmt.Fprintf(w, "data: %s %d\n\ndata: [DONE]\n\n", r.Method, len(body))
			}
		}
		rec := fault(t, dialect.Target{URL: "/old"}, h, reftest.RunDeadline, false)
		wantOutcome(t, rec, Success)
		rec = fault(t, dialect.Target{URL: "/old-post", Body: []byte(`{"x":1}`)}, h, reftest.RunDeadline, false)
		wantOutcome(t, rec, Success)
		if rec.HTTPStatus != 200 {
			t.Errorf("status %d", rec.HTTPStatus)
		}
	})
	t.Run("closes before headers", func(t *testing.T) {
		t.Parallel()
		rec := fault(t, dialect.Target{}, func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}, reftest.RunDeadline, false)
		wantOutcome(t, rec, UpstreamError, "EOF")
		if rec.HeadersMs != nil || rec.HTTPStatus != 0 {
			t.Errorf("headers %v status %d", reftest.Shown(rec.HeadersMs), rec.HTTPStatus)
		}
	})
}
