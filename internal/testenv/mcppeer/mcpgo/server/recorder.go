package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"
)

// The log's shapes are mcppeer.Exchange and mcppeer.Sent (this module
// cannot import streamprobe's): keep the JSON names in step.
type exchange struct {
	Seq             int     `json:"seq"`
	Start           float64 `json:"start"`
	Method          string  `json:"method"`
	RPC             string  `json:"rpc"`
	Session         string  `json:"session"`
	LastEventID     string  `json:"last_event_id"`
	ProtocolVersion string  `json:"protocol_version"`
	MCPMethod       string  `json:"mcp_method"`
	MCPName         string  `json:"mcp_name"`
	Status          int     `json:"status"`
	Writes          []sent  `json:"writes"`
	Ended           bool    `json:"ended"`
	EndAt           float64 `json:"end_at"`
}

type sent struct {
	At   float64 `json:"at"`
	Data string  `json:"data"`
}

// recorder logs each HTTP exchange with the time of each write since the
// request arrived, as mcppeer.Recorder does for the in-process peers.
type recorder struct {
	mu        sync.Mutex
	t0        time.Time
	exchanges []*exchange
}

func (r *recorder) ms(t time.Time) float64 { return float64(t.Sub(r.t0)) / 1e6 }

// add appends ex, numbered, started at t (the recorder's clock starts at
// its first entry).
func (r *recorder) add(ex *exchange, t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.t0.IsZero() {
		r.t0 = t
	}
	ex.Start = r.ms(t)
	ex.Seq = len(r.exchanges) + 1
	r.exchanges = append(r.exchanges, ex)
}

func (r *recorder) toolDone(session, text string, cancelled bool) {
	rpc := "done"
	if cancelled {
		rpc = "cancelled"
	}
	r.add(&exchange{Method: "TOOL", RPC: rpc, Session: session, Writes: []sent{{Data: text}}, Ended: true}, time.Now())
}

func (r *recorder) log() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]exchange, len(r.exchanges))
	for i, ex := range r.exchanges {
		out[i] = *ex
		out[i].Writes = append([]sent(nil), ex.Writes...)
	}
	return out
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		t0 := time.Now()
		ex := &exchange{Method: req.Method, Session: req.Header.Get("Mcp-Session-Id"), LastEventID: req.Header.Get("Last-Event-ID"),
			ProtocolVersion: req.Header.Get("MCP-Protocol-Version"), MCPMethod: req.Header.Get("Mcp-Method"), MCPName: req.Header.Get("Mcp-Name")}
		if req.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
			req.Body = io.NopCloser(bytes.NewReader(body))
			ex.RPC = rpcMethod(body)
		}
		r.add(ex, t0)
		h.ServeHTTP(&logWriter{ResponseWriter: w, r: r, ex: ex, t0: t0}, req)
		r.mu.Lock()
		if ex.Status == 0 {
			ex.Status = http.StatusOK
		}
		ex.Ended = true
		ex.EndAt = float64(time.Since(t0)) / 1e6
		r.mu.Unlock()
	})
}

// rpcMethod names the JSON-RPC method of a POST body ("response" for a
// message without one; batches joined by commas).
func rpcMethod(body []byte) string {
	var batch []struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &batch) != nil {
		var one struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &one) != nil {
			return ""
		}
		batch = append(batch, one)
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
	r  *recorder
	ex *exchange
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
	w.ex.Writes = append(w.ex.Writes, sent{At: float64(time.Since(w.t0)) / 1e6, Data: string(p)})
	w.r.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *logWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
