package dialect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
)

// mcpServer is the reference MCP server on loopback.
func mcpServer(t *testing.T, f refserver.MCPFault) (*refserver.MCP, string) {
	t.Helper()
	m := refserver.NewMCP(f)
	hs := httptest.NewServer(m)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		m.Close()
	})
	return m, hs.URL + "/mcp"
}

// runMCP runs sample on an MCP target whose tool call for it has args.
func runMCP(t *testing.T, url, sample, args string, d probe.Drill) probe.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	// The reference server's 2025-11-25 session and Last-Event-ID resume
	// (2026-07-28: mcp_modern_test.go).
	tg := dialect.Target{Name: "mcp", URL: url, Dialect: "mcp", MCPVersion: "2025-11-25"}
	if args != "" {
		tg.Tools = map[string]dialect.ToolCall{sample: {Name: "progress", Args: json.RawMessage(args)}}
	}
	return probe.Run(ctx, tg, probe.Options{Sample: dialect.Samples[sample], Client: reftest.NewClient(t), Drill: d})
}

func TestMCPToolCall(t *testing.T) {
	t.Parallel()
	m, url := mcpServer(t, "")
	res := runMCP(t, url, "short", `{"steps":4,"interval_ms":30}`, probe.Drill{})
	rec := res.Record
	if rec.Outcome != probe.Success || rec.Chunks != 5 || rec.TFCMs == nil || rec.EndMs == nil || rec.SessionMs == nil {
		t.Fatalf("record: %+v", rec)
	}
	// The first chunk is the first progress notification, at least one
	// interval after the call started; the end is the result.
	if *rec.TFCMs < 30 || *rec.EndMs < 4*30 || rec.Gaps.Count != 4 {
		t.Errorf("tfc %v end %v gaps %d", *rec.TFCMs, *rec.EndMs, rec.Gaps.Count)
	}
	if rec.CloseMs == nil || *rec.CloseMs != 0 {
		t.Errorf("close_ms %v: the result is the last chunk and the end", rec.CloseMs)
	}
	if rec.LastEventID != "1000005" || rec.Events != 6 {
		t.Errorf("last id %q events %d (priming event + 4 progress + result)", rec.LastEventID, rec.Events)
	}
	waitMCP(t, m, 4)
	reqs := m.Requests()
	want := []string{"POST initialize", "POST notifications/initialized", "POST tools/call", "DELETE "}
	for i, w := range want {
		if got := reqs[i].Method + " " + reqs[i].RPC; got != w {
			t.Errorf("request %d: %q, want %q", i, got, w)
		}
	}
	for _, r := range reqs[1:] {
		if r.Session == "" || r.Protocol != "2025-11-25" {
			t.Errorf("%s %s: session %q protocol %q", r.Method, r.RPC, r.Session, r.Protocol)
		}
	}
	if a := reqs[2].Accept; a != "application/json, text/event-stream" {
		t.Errorf("tools/call Accept: %q", a)
	}
}

// waitMCP waits until the server logged n requests (the DELETE comes
// after the run's end).
func waitMCP(t *testing.T, m *refserver.MCP, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(m.Requests()) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests logged, want %d", len(m.Requests()), n)
		}
	}
}

func TestMCPJSONAnswer(t *testing.T) {
	t.Parallel()
	_, url := mcpServer(t, refserver.MCPJSON)
	rec := runMCP(t, url, "short", `{"steps":2,"interval_ms":20}`, probe.Drill{}).Record
	if rec.Outcome != probe.Success || rec.Chunks != 1 || rec.TFCMs == nil || *rec.TFCMs < 40 || rec.LastEventID != "" {
		t.Fatalf("record: %+v", rec)
	}
}

func TestMCPOlderVersion(t *testing.T) {
	t.Parallel()
	m, url := mcpServer(t, "")
	m.Version = "2025-06-18"
	rec := runMCP(t, url, "short", `{"steps":1}`, probe.Drill{}).Record
	if rec.Outcome != probe.Success {
		t.Fatalf("record: %+v", rec)
	}
	if p := m.Requests()[2].Protocol; p != "2025-06-18" {
		t.Errorf("tools/call sent MCP-Protocol-Version %q", p)
	}
	m2, url2 := mcpServer(t, "")
	m2.Version = "2024-11-05"
	rec = runMCP(t, url2, "short", `{"steps":1}`, probe.Drill{}).Record
	if rec.Outcome != probe.ProtocolError || !strings.Contains(rec.Error, `protocol version "2024-11-05"`) {
		t.Fatalf("record: %+v", rec)
	}
}

func TestMCPVerdicts(t *testing.T) {
	t.Parallel()
	const args = `{"steps":12,"interval_ms":30,"fault":"%s"}`
	tests := []struct {
		fault   refserver.MCPFault
		drill   string
		verdict probe.Verdict
		detail  string
		outcome probe.Outcome
		// opaqueDetail is the detail with opaque ids (MCP's default),
		// when the progress, not the ids, tells the bug.
		opaqueDetail string
	}{
		{"", probe.DrillDrop, probe.VerdictPass, "every event once, in order", probe.Success, ""},
		{"", probe.DrillDuplicate, probe.VerdictPass, "every event once, in order", probe.Success, ""},
		{"", probe.DrillStale, probe.VerdictStaleOK, "answered by http_404", probe.Success, ""},
		{refserver.MCPDuplicate, probe.DrillDrop, probe.VerdictDuplicate, "off-by-one replay", probe.Success, ""},
		{refserver.MCPGap, probe.DrillDrop, probe.VerdictMissed, "resume skipped 1 event(s)", probe.Success, "progress jumped from 3 to 5: 1 event(s) missing"},
		{refserver.MCPRestart, probe.DrillDrop, probe.VerdictRestarted, "progress started over at 1", probe.Success, ""},
		{refserver.MCPCrossStream, probe.DrillDrop, probe.VerdictCrossStream, "belonged to another stream", probe.Success, ""},
		{refserver.MCPStaleLive, probe.DrillStale, probe.VerdictUndefinedStale, "live tail", probe.Success, ""},
		{refserver.MCPNoIDs, probe.DrillDrop, probe.VerdictNotSupported, "no event ids", probe.UpstreamError, ""},
		{refserver.MCPJSON, probe.DrillDrop, probe.VerdictNotSupported, "no event carried an id", probe.Success, ""},
		{refserver.MCPReorder, probe.DrillDrop, probe.VerdictReordered, "came out of order (each once)", probe.Success, ""},
		{refserver.MCPLeaveOpen, probe.DrillDrop, probe.VerdictLeftOpen, "was still open 2s later: the server SHOULD close it", probe.Success, ""},
		{refserver.MCPCancelOnDrop, probe.DrillDrop, probe.VerdictCancelledOnDrop, "ended in an error that says it was cancelled (JSON-RPC error: context canceled)", probe.UpstreamError, ""},
		{refserver.MCPStaleQuiet, probe.DrillStale, probe.VerdictUndefinedStale, "stayed open 3s with no event (keep-alives only)", probe.Success, ""},
	}
	for _, tc := range tests {
		for _, opaque := range []bool{false, true} {
			name := string(tc.fault) + "/" + tc.drill
			if opaque {
				name += "/opaque"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				_, url := mcpServer(t, "")
				rec := runMCP(t, url, "long", strings.ReplaceAll(args, "%s", string(tc.fault)), probe.Drill{Name: tc.drill, OpaqueIDs: opaque}).Record
				detail := tc.detail
				if opaque && tc.opaqueDetail != "" {
					detail = tc.opaqueDetail
				}
				if rec.Verdict != tc.verdict || rec.Outcome != tc.outcome || !strings.Contains(rec.ResumeDetail, detail) {
					t.Fatalf("verdict %s outcome %s (%s), want %s %s; detail %q, want %q", rec.Verdict, rec.Outcome, rec.Error, tc.verdict, tc.outcome, rec.ResumeDetail, detail)
				}
				if want := map[refserver.MCPFault]int{refserver.MCPGap: 1}[tc.fault]; rec.Missed != want {
					t.Errorf("missed %d, want %d (each lost event once, whether the ids or the progress tell it)", rec.Missed, want)
				}
				if tc.fault == refserver.MCPCrossStream && rec.Missed != 0 {
					t.Errorf("missed %d: another stream's ids entered the id check", rec.Missed)
				}
				// left_open names a SHOULD the server missed: the answer was
				// whole (the MCP conformance suite's own sse-retry server
				// leaves the GET open), so it fails nothing.
				if tc.verdict.Failed() != (tc.fault != "" && tc.fault != refserver.MCPNoIDs && tc.fault != refserver.MCPJSON && tc.fault != refserver.MCPLeaveOpen) {
					t.Errorf("verdict %s failed = %v", tc.verdict, tc.verdict.Failed())
				}
			})
		}
	}
}

// SEP-1699: the server closes the stream after the priming event (and
// after every 3 messages) with retry: 150; the probe resumes by itself,
// waiting the retry each time, and the run is a success with a pass.
func TestMCPPolling(t *testing.T) {
	t.Parallel()
	m, url := mcpServer(t, refserver.MCPPoll)
	m.Retry = 150 * time.Millisecond
	rec := runMCP(t, url, "short", `{"steps":6,"interval_ms":20}`, probe.Drill{}).Record
	if rec.Outcome != probe.Success || rec.Verdict != probe.VerdictPass || rec.Chunks != 7 || rec.ServerDrops < 2 || !rec.Resumed {
		t.Fatalf("record: %+v", rec)
	}
	reqs := m.Requests()
	var closed time.Time
	gets := 0
	for _, r := range reqs {
		if r.Method == "GET" && !closed.IsZero() {
			gets++
			if r.Session == "" || r.Protocol == "" || r.LastEventID == "" {
				t.Errorf("resume GET: session %q protocol %q last id %q", r.Session, r.Protocol, r.LastEventID)
			}
			if wait := r.At.Sub(closed); wait < m.Retry {
				t.Errorf("the resume came %v after the close; the server asked for retry: %v", wait, m.Retry)
			}
		}
		closed = r.Closed
	}
	if gets < 2 {
		t.Errorf("%d resume GETs after closes: %+v", gets, reqs)
	}
}

func TestMCPCancel(t *testing.T) {
	t.Parallel()
	m, url := mcpServer(t, "")
	rec := runMCP(t, url, "cancel", `{"steps":40,"interval_ms":30}`, probe.Drill{}).Record
	if rec.Outcome != probe.ClientCancelled || !rec.Intended() || rec.Chunks != dialect.DefaultCancelAfter || rec.CancelEndMs == nil || rec.ResultAfterCancel ||
		!strings.Contains(rec.Error, "with no result") {
		t.Fatalf("record: %+v", rec)
	}
	waitMCP(t, m, 5)
	if r := m.Requests()[3]; r.RPC != "notifications/cancelled" {
		t.Errorf("request 3: %s %s", r.Method, r.RPC)
	}
}

// A tools/call answered with neither SSE nor JSON, and an initialize
// that fails: one line each, naming what came, with no secret.
func TestMCPBadAnswers(t *testing.T) {
	t.Parallel()
	const key = "sk-mcp-secret-0123456789"
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") == "" {
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`)
			return
		}
		if strings.Contains(r.Header.Get("Accept"), "json") && r.Method == http.MethodPost && r.ContentLength > 0 {
			b, _ := io.ReadAll(r.Body)
			if strings.Contains(string(b), "tools/call") {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<html>key "+r.Header.Get("Authorization")+"</html>")
				return
			}
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	tg := dialect.Target{Name: "m", URL: hs.URL, Dialect: "mcp", Header: http.Header{"Authorization": {"Bearer " + key}}}
	rec := probe.Run(ctx, tg, probe.Options{Sample: dialect.Samples["short"], Client: reftest.NewClient(t)}).Record
	if rec.Outcome != probe.ProtocolError || !strings.Contains(rec.Error, "not text/event-stream or application/json") || strings.Contains(rec.Error, key) {
		t.Errorf("record %+v", rec)
	}
	hs2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer hs2.Close()
	tg.URL = hs2.URL
	rec = probe.Run(ctx, tg, probe.Options{Sample: dialect.Samples["short"], Client: reftest.NewClient(t)}).Record
	if rec.Outcome != probe.UpstreamError || rec.HTTPStatus != 401 || !strings.HasPrefix(rec.Error, "session setup: initialize: ") || rec.SessionMs == nil {
		t.Errorf("record %+v", rec)
	}
}

// Server messages unrelated to the call (a log notification, a ping
// request, progress for another token) are counted, never chunks, and
// kept out of the gaps.
func TestMCPUnrelatedMessages(t *testing.T) {
	t.Parallel()
	tokens := make(chan string, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m struct {
			Method string `json:"method"`
			Params struct {
				Meta struct {
					ProgressToken string `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		json.Unmarshal(b, &m)
		switch m.Method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26"}}`)
		case "tools/call":
			token := m.Params.Meta.ProgressToken
			tokens <- token
			w.Header().Set("Content-Type", "text/event-stream")
			for _, d := range []string{
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + token + `","progress":1}}`,
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`,
				`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"someone-else","progress":9}}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + token + `","progress":2}}`,
				`{"jsonrpc":"2.0","id":"` + token + `","result":{"content":[]}}`,
			} {
				fmt.Fprintf(w, "data: %s\n\n", d)
				w.(http.Flusher).Flush()
				time.Sleep(10 * time.Millisecond)
			}
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	res := probe.Run(ctx, dialect.Target{Name: "m", URL: hs.URL, Dialect: "mcp"}, probe.Options{Sample: dialect.Samples["short"], Client: reftest.NewClient(t), RequestID: "run-1"})
	rec := res.Record
	if token := <-tokens; token != "run-1" || rec.Outcome != probe.Success || rec.Chunks != 3 || rec.Unrelated != 3 || rec.Events != 6 || rec.Gaps.Count != 2 || rec.Verdict != "" {
		t.Fatalf("token %q record %+v", token, rec)
	}
}

// A stale Last-Event-ID answered on the stream by a JSON-RPC error (id
// null: the server cannot tell which request) is a defined answer.
func TestMCPStaleJSONRPCError(t *testing.T) {
	t.Parallel()
	m := refserver.NewMCP("")
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == dialect.DefaultStaleID {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: 9\ndata:\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,\"message\":\"unknown event id\"}}\n\n")
			return
		}
		m.ServeHTTP(w, r)
	}))
	defer func() { hs.CloseClientConnections(); hs.Close(); m.Close() }()
	rec := runMCP(t, hs.URL, "long", `{"steps":8,"interval_ms":20}`, probe.Drill{Name: probe.DrillStale}).Record
	if rec.Verdict != probe.VerdictStaleOK || rec.StaleAnswer != "error_event" {
		t.Fatalf("verdict %s answer %q (%s) %s", rec.Verdict, rec.StaleAnswer, rec.ResumeDetail, rec.Error)
	}
}

// A session setup answered 200, then nothing (keep-alive pings, or a few
// bytes of a JSON body): the timeout says what came, never "no response
// headers", which did come; for server/discover (the version asked of the
// server) and for initialize (the version pinned to 2025-11-25).
func TestMCPSetupThatGoesSilentIsNamed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, want string
		answer     func(w http.ResponseWriter)
	}{
		{"pings", "session setup: timeout: %s was answered (HTTP 200, text/event-stream) with 2 events and no response to it, then nothing within 1s", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		}},
		{"json bytes", "session setup: timeout: %s was answered (HTTP 200, application/json) with 12 bytes of its body, then nothing within 1s", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"`)
		}},
	} {
		for pin, method := range map[string]string{"": "server/discover", "2025-11-25": "initialize"} {
			t.Run(tt.name+"/"+method, func(t *testing.T) {
				t.Parallel()
				hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					tt.answer(w)
					w.(http.Flusher).Flush()
					<-r.Context().Done()
				}))
				defer func() { hs.CloseClientConnections(); hs.Close() }()
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				tg := dialect.Target{Name: "m", URL: hs.URL, Dialect: "mcp", MCPVersion: pin}
				rec := probe.Run(ctx, tg, probe.Options{Sample: dialect.Samples["short"], Client: reftest.NewClient(t), Timeout: time.Second}).Record
				if want := fmt.Sprintf(tt.want, method); rec.Outcome != probe.Timeout || rec.Error != want {
					t.Errorf("outcome %s, error\n %q\nwant\n %q", rec.Outcome, rec.Error, want)
				}
			})
		}
	}
}

// A ping request of the server's on the call's stream is answered, as the
// protocol requires: a POST of {"result":{}} with the ping's own id and
// the session's headers; no other request of the server's is answered.
func TestMCPAnswersPing(t *testing.T) {
	t.Parallel()
	answers := make(chan string, 4)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(b), `"method":"initialize"`):
			w.Header().Set("Mcp-Session-Id", "s-1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`)
		case strings.Contains(string(b), `"method":"tools/call"`):
			w.Header().Set("Content-Type", "text/event-stream")
			for _, d := range []string{
				`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
				`{"jsonrpc":"2.0","id":"s-2","method":"sampling/createMessage","params":{}}`,
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"run-p","progress":1}}`,
			} {
				fmt.Fprintf(w, "data: %s\n\n", d)
				w.(http.Flusher).Flush()
			}
			time.Sleep(300 * time.Millisecond) // the answer to the ping comes meanwhile
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"run-p\",\"result\":{\"content\":[]}}\n\n")
		case strings.Contains(string(b), `"result"`) || strings.Contains(string(b), `"error"`):
			answers <- r.Header.Get("Mcp-Session-Id") + " " + string(b)
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	rec := probe.Run(ctx, dialect.Target{Name: "m", URL: hs.URL, Dialect: "mcp"}, probe.Options{Sample: dialect.Samples["short"], Client: reftest.NewClient(t), RequestID: "run-p"}).Record
	if rec.Outcome != probe.Success || rec.Chunks != 2 {
		t.Fatalf("record %+v", rec)
	}
	select {
	case a := <-answers:
		if a != `s-1 {"jsonrpc":"2.0","id":7,"result":{}}` {
			t.Errorf("answer %q", a)
		}
	default:
		t.Fatal("the ping was not answered")
	}
	select {
	case a := <-answers:
		t.Errorf("a second answer: %q", a)
	default:
	}
}

// A call whose response does not come in time is named as such: an MCP
// call has no end marker.
func TestMCPTimeoutNamesTheResponse(t *testing.T) {
	t.Parallel()
	_, url := mcpServer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	tg := dialect.Target{Name: "mcp", URL: url, Dialect: "mcp",
		Tools: map[string]dialect.ToolCall{"short": {Name: "progress", Args: json.RawMessage(`{"steps":1000,"interval_ms":50}`)}}}
	rec := probe.Run(ctx, tg, probe.Options{Sample: dialect.Samples["short"], Client: reftest.NewClient(t), Timeout: 2 * time.Second}).Record
	if rec.Outcome != probe.Timeout || rec.Error != "timeout: no response to the call within 2s" {
		t.Fatalf("outcome %s error %q", rec.Outcome, rec.Error)
	}
}
