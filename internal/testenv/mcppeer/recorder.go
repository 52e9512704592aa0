package mcppeer

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// Recorder logs the HTTP exchanges of an in-process peer (the Go SDK's
// handler) as server.mjs logs its own: each write with its time since the
// request arrived.
type Recorder struct {
	mu        sync.Mutex
	t0        time.Time
	exchanges []*Exchange
}

// ms is t on the recorder's clock.
func (r *Recorder) ms(t time.Time) float64 { return float64(t.Sub(r.t0)) / 1e6 }

// ToolDone logs the end of a tool call (see Exchange).
func (r *Recorder) ToolDone(session, text string, cancelled bool) {
	rpc := "done"
	if cancelled {
		rpc = "cancelled"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.t0.IsZero() {
		r.t0 = time.Now()
	}
	r.exchanges = append(r.exchanges, &Exchange{Seq: len(r.exchanges) + 1, Start: r.ms(time.Now()), Method: "TOOL", RPC: rpc,
		Session: session, Writes: []Sent{{Data: text}}, Ended: true})
}

// Wrap returns h with its exchanges logged.
func (r *Recorder) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		t0 := time.Now()
		ex := &Exchange{Method: req.Method, Session: req.Header.Get("Mcp-Session-Id"), LastEventID: req.Header.Get("Last-Event-ID"),
			ProtocolVersion: req.Header.Get("MCP-Protocol-Version"), MCPMethod: req.Header.Get("Mcp-Method"), MCPName: req.Header.Get("Mcp-Name")}
		if req.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
			req.Body = io.NopCloser(bytes.NewReader(body))
			ex.RPC = rpcMethod(body)
		}
		r.mu.Lock()
		if r.t0.IsZero() {
			r.t0 = t0
		}
		ex.Start = r.ms(t0)
		ex.Seq = len(r.exchanges) + 1
		r.exchanges = append(r.exchanges, ex)
		r.mu.Unlock()
		lw := &logWriter{ResponseWriter: w, r: r, ex: ex, t0: t0}
		h.ServeHTTP(lw, req)
		r.mu.Lock()
		if ex.Status == 0 {
			ex.Status = http.StatusOK
		}
		ex.Ended = true
		ex.EndAt = float64(time.Since(t0)) / 1e6
		r.mu.Unlock()
	})
}

// Log returns a copy of the exchanges so far, oldest first.
func (r *Recorder) Log() ([]Exchange, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Exchange, len(r.exchanges))
	for i, ex := range r.exchanges {
		out[i] = *ex
		out[i].Writes = append([]Sent(nil), ex.Writes...)
	}
	return out, nil
}

// rpcMethod names the JSON-RPC method(s) of a POST body as server.mjs
// does: "response" for a message without one.
func rpcMethod(body []byte) string {
	var one struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &one) == nil {
		if one.Method == "" {
			return "response"
		}
		return one.Method
	}
	var batch []struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &batch) != nil {
		return ""
	}
	s := ""
	for i, m := range batch {
		if i > 0 {
			s += ","
		}
		if m.Method == "" {
			m.Method = "response"
		}
		s += m.Method
	}
	return s
}

type logWriter struct {
	http.ResponseWriter
	r  *Recorder
	ex *Exchange
	t0 time.Time
}

func (w *logWriter) WriteHeader(code int) {
	w.r.mu.Lock()
	if w.ex.Status == 0 {
		w.ex.Status = code
	}
	w.r.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.r.mu.Lock()
	if w.ex.Status == 0 {
		w.ex.Status = http.StatusOK
	}
	w.ex.Writes = append(w.ex.Writes, Sent{At: float64(time.Since(w.t0)) / 1e6, Data: string(p)})
	w.r.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

// Flush and Unwrap let http.ResponseController (which the SDK flushes
// each event with) reach the real writer.
func (w *logWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
