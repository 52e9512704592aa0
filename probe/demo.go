package probe

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/internal/refserver"
)

// DemoSchedules are the openai-chat streams the built-in reference target
// plays for each sample: short is the scorecard article's worked example
// (chunks at 412 ... 1044 ms, [DONE] at 1051 ms), long is 40 chunks 30 ms
// apart with one 320 ms stall, cancel is the long stream.
func DemoSchedules() map[string][]refserver.Step {
	short := &refserver.Chat{Model: "refserver"}
	short.Role(380 * time.Millisecond)
	for i, at := range refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044) {
		short.Text(at, "w"+strconv.Itoa(i))
	}
	short.Finish(1045*time.Millisecond).Usage(1046*time.Millisecond, 14, 10).Done(1051 * time.Millisecond)

	long := &refserver.Chat{Model: "refserver"}
	long.Heartbeat(200 * time.Millisecond).Role(580 * time.Millisecond)
	at := 620 * time.Millisecond
	for i := range 40 {
		if i == 25 {
			at += 290 * time.Millisecond
		}
		long.Text(at, "w"+strconv.Itoa(i))
		at += 30 * time.Millisecond
	}
	long.Finish(at).Usage(at+time.Millisecond, 80, 40).Done(at + 4*time.Millisecond)
	return map[string][]refserver.Step{"short": short.Steps(true), "long": long.Steps(true), "cancel": long.Steps(true)}
}

// DemoResponses and DemoAnthropic are the demo streams in the Responses
// API and Messages API formats: the short worked example's timing.
func DemoResponses() []refserver.Step {
	r := &refserver.Responses{}
	r.Created(360*time.Millisecond).Meta(370*time.Millisecond, "response.in_progress")
	for i, at := range refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044) {
		r.Text(at, "w"+strconv.Itoa(i))
	}
	return r.Completed(1051*time.Millisecond, 14, 10).Steps()
}

// DemoAnthropic is the worked example as a Messages API stream, with a
// ping before the first text.
func DemoAnthropic() []refserver.Step {
	a := &refserver.Anthropic{}
	a.MessageStart(360*time.Millisecond, 14).BlockStart(370*time.Millisecond, "text").Ping(390 * time.Millisecond)
	for i, at := range refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044) {
		a.Text(at, "w"+strconv.Itoa(i))
	}
	return a.MessageDelta(1046*time.Millisecond, 10).Stop(1051 * time.Millisecond).Steps()
}

// DemoGemini is the worked example as a Gemini stream: a thought, then the
// text, the last chunk carrying finishReason STOP and the usage; the
// body ends with it. fault picks one error kind instead (DemoFaults).
func DemoGemini(fault string) []refserver.Step {
	g := &refserver.Gemini{}
	if fault == "blocked-prompt" {
		return g.PromptBlocked(360*time.Millisecond, "SAFETY").Steps()
	}
	g.Thought(360*time.Millisecond, "Recalling the capital.")
	ms := refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044)
	for i, at := range ms[:len(ms)-1] {
		g.Text(at, "w"+strconv.Itoa(i))
	}
	switch fault {
	case "blocked-answer":
		return g.Finish(ms[len(ms)-1], "", "SAFETY", 14, 9, 4).Steps()
	case "cut-off":
		return g.Steps()
	}
	return g.Finish(ms[len(ms)-1], "w9", "STOP", 14, 10, 4).Steps()
}

// DemoOllama is the worked example as an Ollama /api/chat stream (NDJSON):
// a thinking line, the text lines, then done with the counts. fault picks
// one error kind instead (DemoFaults).
func DemoOllama(fault string) []refserver.Step {
	o := &refserver.Ollama{}
	o.Thinking(360*time.Millisecond, "Recalling the capital.")
	ms := refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044)
	for i, at := range ms {
		if i == 5 && fault == "error-line" {
			return o.Error(at, "an error was encountered while running the model: unexpected EOF").Steps()
		}
		if i == 5 && fault == "cut-off" {
			return o.Cut(at).Steps()
		}
		o.Text(at, "w"+strconv.Itoa(i))
	}
	return o.Done(1051*time.Millisecond, "stop", 14, 10).Steps()
}

// DemoAISDK is the worked example as an AI SDK UI message stream: start,
// a reasoning part, the text deltas, finish, [DONE]. fault picks one error
// kind instead: error-part, abort, cut-off (the body ends before
// [DONE]).
func DemoAISDK(fault string) []refserver.Step {
	a := &refserver.AISDK{}
	a.Part(340*time.Millisecond, "start", map[string]any{"messageId": "refserver-1"}).Part(341*time.Millisecond, "start-step", nil).
		Part(350*time.Millisecond, "reasoning-start", map[string]any{"id": "r1"}).Reasoning(360*time.Millisecond, "Recalling the capital.").
		Part(370*time.Millisecond, "reasoning-end", map[string]any{"id": "r1"}).Part(380*time.Millisecond, "text-start", map[string]any{"id": "t1"})
	for i, at := range refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044) {
		if i == 5 {
			switch fault {
			case "error-part":
				return a.Error(at, "the model is overloaded").Part(at+time.Millisecond, "finish-step", nil).
					Part(at+2*time.Millisecond, "finish", map[string]any{"finishReason": "error"}).Done(at + 3*time.Millisecond).Steps()
			case "abort":
				return a.Part(at, "abort", nil).Done(at + time.Millisecond).Steps()
			case "cut-off":
				return a.Steps()
			}
		}
		a.Text(at, "w"+strconv.Itoa(i))
	}
	return a.Part(1046*time.Millisecond, "text-end", map[string]any{"id": "t1"}).Part(1047*time.Millisecond, "finish-step", nil).
		Part(1048*time.Millisecond, "finish", map[string]any{"finishReason": "stop"}).Done(1051 * time.Millisecond).Steps()
}

// DemoFaults are the fault answers of the built-in reference target, by
// the model a request names: each error kind of a dialect once. A fault
// model answers every dialect that names its model in the URL.
var DemoFaults = []string{"blocked-prompt", "blocked-answer", "cut-off", "error-line", "http-429", "http-404"}

// demoFault is the fault a request asks for by its model (in the URL, or
// the body's "model"), "" for none.
func demoFault(r *http.Request, body []byte) string {
	for _, f := range DemoFaults {
		if strings.Contains(r.URL.Path, "/models/"+f+":") || bytes.Contains(body, []byte(`"model":"`+f+`"`)) {
			return f
		}
	}
	return ""
}

// NewDemoServer returns the built-in reference target, unstarted: an
// refserver server that answers each fixed sample with its demo schedule on
// the chat completions path, the drill stream (DemoDrillSchedule, with
// ids, resumable) on /events, and the worked example as a Responses API
// stream (resumable with starting_after), as a Messages API stream and as
// a Gemini stream and as an Ollama NDJSON stream on /api/chat (each with a
// fault per error kind by model: DemoFaults).
func NewDemoServer() *refserver.Server {
	sched := DemoSchedules()
	drills := DemoDrillSchedule()
	responses, anthropic := DemoResponses(), DemoAnthropic()
	srv := refserver.NewUnstarted(sched["short"])
	srv.Mount = map[string]http.Handler{"/mcp": refserver.NewMCP("")}
	// A resume costs a 20 ms handshake, as a real one does.
	srv.ResumeHeaderDelay = 20 * time.Millisecond
	srv.ScheduleFor = func(r *http.Request, body []byte) []refserver.Step {
		switch {
		case r.URL.Path == "/events":
			return drills
		case strings.HasPrefix(r.URL.Path, "/v1/responses"):
			return responses
		case r.URL.Path == "/v1/messages":
			return anthropic
		case bytes.Contains(body, []byte(`"trigger":"submit-message"`)):
			return DemoAISDK("") // a useChat request, on any route
		case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
			return DemoGemini(demoFault(r, body))
		case r.URL.Path == "/api/chat":
			return DemoOllama(demoFault(r, body))
		}
		for _, name := range SampleNames {
			// The samples share prompts; max_tokens tells them apart
			// only where needed, so the long schedule answers both.
			if bytes.Contains(body, []byte(Samples[name].Prompt)) {
				return sched[name]
			}
		}
		return nil
	}
	srv.StatusFor = func(r *http.Request, body []byte) (int, string) {
		switch demoFault(r, body) {
		case "http-429":
			return http.StatusTooManyRequests, refserver.GeminiError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")
		case "http-404":
			return http.StatusNotFound, refserver.OllamaError(`model "http-404" not found, try pulling it first`)
		}
		return 0, ""
	}
	srv.ContentTypeFor = func(r *http.Request) string {
		if r.URL.Path == "/api/chat" {
			return refserver.NDJSON
		}
		return ""
	}
	return srv
}

// DemoDrill is one resume drill against the reference target with a
// server behaviour switched on, as `streamprobe demo -drills` plays them.
type DemoDrill struct {
	Server string // what the server does
	Drill  Drill
	Setup  func(*refserver.Server)
	Want   Verdict // the verdict the drill must give against this server
	// MCP, when set, runs the drill with the mcp dialect against the
	// reference MCP server on /mcp with this fault ("correct" for none).
	MCP refserver.MCPFault
}

// DemoTarget is the target a demo drill probes on the reference server
// at base: the generic drill stream, or the MCP server's progress tool
// (12 steps 40 ms apart) with the drill's fault.
func (dd DemoDrill) DemoTarget(base string) Target {
	if dd.MCP == "" {
		return Target{Name: "demo", URL: base, Dialect: "sse", EndData: "[DONE]"}
	}
	f := dd.MCP
	if f == "correct" {
		f = ""
	}
	args := `{"steps":12,"interval_ms":40,"fault":"` + string(f) + `"}`
	return Target{Name: "demo", URL: strings.TrimSuffix(base, "/") + "/mcp", Dialect: "mcp",
		Tools: map[string]ToolCall{"long": {Name: "progress", Args: []byte(args)}}}
}

// mountMCP puts the reference MCP server on /mcp.
func mountMCP(s *refserver.Server) { s.Mount = map[string]http.Handler{"/mcp": refserver.NewMCP("")} }

// DemoDrillSchedule is the generic stream the drills run on: 12 events 40 ms
// apart from 100 ms, ids 1 to 12, then [DONE] with id 13.
func DemoDrillSchedule() []refserver.Step {
	at := make([]time.Duration, 12)
	for i := range at {
		at[i] = time.Duration(100+40*i) * time.Millisecond
	}
	return refserver.Events(at, 600*time.Millisecond)
}

// DemoDrills lists the drills of the demo: each verdict once.
func DemoDrills() []DemoDrill {
	return []DemoDrill{
		{Server: "correct", Drill: Drill{Name: DrillDrop}, Want: VerdictPass},
		{Server: "correct", Drill: Drill{Name: DrillDuplicate}, Want: VerdictPass},
		{Server: "answers a stale id with an error event", Drill: Drill{Name: DrillStale}, Want: VerdictStaleOK},
		{Server: "replays the sent id again (off-by-one)", Drill: Drill{Name: DrillDrop}, Setup: func(s *refserver.Server) { s.Bug = refserver.Inclusive }, Want: VerdictDuplicate},
		{Server: "resumes at id+2", Drill: Drill{Name: DrillDrop}, Setup: func(s *refserver.Server) { s.Bug = refserver.Skip }, Want: VerdictMissed},
		{Server: "ignores Last-Event-ID", Drill: Drill{Name: DrillDrop}, Setup: func(s *refserver.Server) { s.Bug = refserver.Restart }, Want: VerdictRestarted},
		{Server: "replays an id with different data", Drill: Drill{Name: DrillDrop}, Setup: func(s *refserver.Server) { s.Bug = refserver.Mismatch }, Want: VerdictMismatch},
		{Server: "streams the live tail for a stale id", Drill: Drill{Name: DrillStale}, Setup: func(s *refserver.Server) { s.Stale = refserver.StaleLive }, Want: VerdictUndefinedStale},
		{Server: "MCP, correct event store", Drill: Drill{Name: DrillDrop}, Setup: mountMCP, MCP: "correct", Want: VerdictPass},
		{Server: "MCP, answers an unknown Last-Event-ID with 404", Drill: Drill{Name: DrillStale}, Setup: mountMCP, MCP: "correct", Want: VerdictStaleOK},
		{Server: "MCP, replays from the sent id itself", Drill: Drill{Name: DrillDrop}, Setup: mountMCP, MCP: refserver.MCPDuplicate, Want: VerdictDuplicate},
		{Server: "MCP, skips an event on resume", Drill: Drill{Name: DrillDrop}, Setup: mountMCP, MCP: refserver.MCPGap, Want: VerdictMissed},
		{Server: "MCP, runs the tool again on resume", Drill: Drill{Name: DrillDrop}, Setup: mountMCP, MCP: refserver.MCPRestart, Want: VerdictRestarted},
		{Server: "MCP, replays another call's messages", Drill: Drill{Name: DrillDrop}, Setup: mountMCP, MCP: refserver.MCPCrossStream, Want: VerdictCrossStream},
		{Server: "MCP, live tail for an unknown Last-Event-ID", Drill: Drill{Name: DrillStale}, Setup: mountMCP, MCP: refserver.MCPStaleLive, Want: VerdictUndefinedStale},
		{Server: "MCP, no event ids", Drill: Drill{Name: DrillDrop}, Setup: mountMCP, MCP: refserver.MCPNoIDs, Want: VerdictNotSupported},
	}
}
