// Package builtin is the built-in reference target as every command runs
// it: the streams it plays for each dialect and sample (the scorecard
// article's worked example, with a fault per error kind), the routes that
// pick them, and the resume drills of demo -drills, each against a server
// with one bug. It wires internal/refserver; the measurement packages do
// not import it.
package builtin

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/probe"
)

// ChatSchedules are the openai-chat streams the built-in reference target
// plays for each sample: short is the scorecard article's worked example
// (chunks at 412 ... 1044 ms, [DONE] at 1051 ms), long is 40 chunks 30 ms
// apart with one 320 ms stall, cancel is the long stream.
func ChatSchedules() map[string][]refserver.Step {
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

// Responses and Anthropic are the demo streams in the Responses
// API and Messages API formats: the short worked example's timing.
func Responses() []refserver.Step {
	r := &refserver.Responses{}
	r.Created(360*time.Millisecond).Meta(370*time.Millisecond, "response.in_progress")
	for i, at := range refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044) {
		r.Text(at, "w"+strconv.Itoa(i))
	}
	return r.Completed(1051*time.Millisecond, 14, 10).Steps()
}

// Anthropic is the worked example as a Messages API stream, with a
// ping before the first text.
func Anthropic() []refserver.Step {
	a := &refserver.Anthropic{}
	a.MessageStart(360*time.Millisecond, 14).BlockStart(370*time.Millisecond, "text").Ping(390 * time.Millisecond)
	for i, at := range refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044) {
		a.Text(at, "w"+strconv.Itoa(i))
	}
	return a.MessageDelta(1046*time.Millisecond, 10).Stop(1051 * time.Millisecond).Steps()
}

// Gemini is the worked example as a Gemini stream: a thought, then the
// text, the last chunk carrying finishReason STOP and the usage; the
// body ends with it. fault picks one error kind instead (Faults).
func Gemini(fault string) []refserver.Step {
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

// Ollama is the worked example as an Ollama /api/chat stream (NDJSON):
// a thinking line, the text lines, then done with the counts. fault picks
// one error kind instead (Faults).
func Ollama(fault string) []refserver.Step {
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

// AISDK is the worked example as an AI SDK UI message stream: start,
// a reasoning part, the text deltas, finish, [DONE]. fault picks one error
// kind instead: error-part, abort, cut-off (the body ends before
// [DONE]).
func AISDK(fault string) []refserver.Step {
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

// Cohere is the worked example as a Cohere v2 chat stream: message-start,
// a tool plan, the text deltas, message-end with COMPLETE and the usage.
// fault picks one error kind instead: error-line (message-end with
// finish_reason ERROR after five deltas).
func Cohere(fault string) []refserver.Step {
	c := &refserver.Cohere{}
	c.Start(340*time.Millisecond).ToolPlan(360*time.Millisecond, "I will recall the capital.").ContentStart(380 * time.Millisecond)
	for i, at := range refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044) {
		if i == 5 && fault == "error-line" {
			return c.End(at, "ERROR", "internal server error, please retry", 14, 5).Steps()
		}
		c.Text(at, "w"+strconv.Itoa(i))
	}
	return c.ContentEnd(1046*time.Millisecond).End(1051*time.Millisecond, "COMPLETE", "", 14, 10).Steps()
}

// Bedrock is the worked example as an Amazon Bedrock ConverseStream
// (AWS event stream): messageStart, a reasoning delta, the text deltas,
// messageStop, metadata with the usage. fault picks one error kind
// instead: error-line (a modelStreamErrorException after five deltas).
func Bedrock(fault string) []refserver.Step {
	b := &refserver.Bedrock{}
	b.Start(340*time.Millisecond).Reasoning(360*time.Millisecond, "Recalling the capital.")
	for i, at := range refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044) {
		if i == 5 && fault == "error-line" {
			return b.Exception(at, "modelStreamErrorException", "The model stream was interrupted: retry the request.").Steps()
		}
		b.Text(at, "w"+strconv.Itoa(i))
	}
	return b.Stop(1046*time.Millisecond, "end_turn").Metadata(1051*time.Millisecond, 14, 10, 1051*time.Millisecond).Steps()
}

// Text is the worked example as a plain-text stream: each word written
// bare at its time, the body ending after the last.
func Text() []refserver.Step {
	x := &refserver.Text{}
	for i, at := range refserver.Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044) {
		x.Write(at, " w"+strconv.Itoa(i))
	}
	return x.Steps()
}

// Faults are the fault answers of the built-in reference target, by
// the model a request names: each error kind of a dialect once. A fault
// model answers every dialect that names its model in the URL.
var Faults = []string{"blocked-prompt", "blocked-answer", "cut-off", "error-line", "http-429", "http-404"}

// fault is the fault a request asks for by its model (in the URL, or
// the body's "model"), "" for none.
func fault(r *http.Request, body []byte) string {
	for _, f := range Faults {
		if strings.Contains(r.URL.Path, "/models/"+f+":") || strings.Contains(r.URL.Path, "/model/"+f+"/") || bytes.Contains(body, []byte(`"model":"`+f+`"`)) {
			return f
		}
	}
	return ""
}

// NewServer returns the built-in reference target, unstarted: an
// refserver server that answers each fixed sample with its demo schedule on
// the chat completions path, the drill stream (refserver.DrillEvents, with
// ids, resumable) on /events, and the worked example as a Responses API
// stream (resumable with starting_after), as a Messages API stream and as
// a Gemini stream and as an Ollama NDJSON stream on /api/chat (each with a
// fault per error kind by model: Faults).
func NewServer() *refserver.Server {
	sched := ChatSchedules()
	drills := refserver.DrillEvents()
	responses, anthropic := Responses(), Anthropic()
	srv := refserver.NewUnstarted(sched["short"])
	srv.Mount = map[string]http.Handler{"/mcp": refserver.NewMCP(""), LangGraphPath: refserver.NewLangGraph(), ResumablePath: refserver.NewResumable()}
	// A resume costs a 20 ms handshake, as a real one does.
	srv.ResumeHeaderDelay = 20 * time.Millisecond
	srv.ScheduleFor = func(r *http.Request, body []byte) []refserver.Step {
		switch {
		case r.URL.Path == "/events":
			return drills
		case r.URL.Path == TextPath:
			return Text()
		case strings.HasPrefix(r.URL.Path, "/v1/responses"):
			return responses
		case r.URL.Path == "/v1/messages", strings.HasSuffix(r.URL.Path, ":streamRawPredict"):
			return anthropic
		case bytes.Contains(body, []byte(`"trigger":"submit-message"`)):
			return AISDK("") // a useChat request, on any route
		case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
			return Gemini(fault(r, body))
		case r.URL.Path == "/api/chat":
			return Ollama(fault(r, body))
		case r.URL.Path == "/v2/chat":
			return Cohere(fault(r, body))
		case bedrockPath(r):
			return Bedrock(fault(r, body))
		}
		for _, name := range dialect.SampleNames {
			// The samples share prompts; max_tokens tells them apart
			// only where needed, so the long schedule answers both.
			if bytes.Contains(body, []byte(dialect.Samples[name].Prompt)) {
				return sched[name]
			}
		}
		return nil
	}
	srv.StatusFor = func(r *http.Request, body []byte) (int, string) {
		switch fault(r, body) {
		case "http-429":
			return http.StatusTooManyRequests, refserver.GeminiError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")
		case "http-404":
			return http.StatusNotFound, refserver.OllamaError(`model "http-404" not found, try pulling it first`)
		}
		return 0, ""
	}
	srv.ContentTypeFor = func(r *http.Request) string {
		switch r.URL.Path {
		case "/api/chat":
			return refserver.NDJSON
		case TextPath:
			return refserver.PlainText
		}
		if bedrockPath(r) {
			return refserver.EventStream
		}
		return ""
	}
	return srv
}

// bedrockPath reports a Bedrock runtime streaming path.
func bedrockPath(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/model/") && (strings.HasSuffix(r.URL.Path, "/converse-stream") || strings.HasSuffix(r.URL.Path, "/invoke-with-response-stream"))
}

// VertexLocation is the Vertex AI location the built-in target serves
// (Gemini's streamGenerateContent and Claude's streamRawPredict under it).
const VertexLocation = "/v1/projects/streamprobe/locations/us-central1"

// TextPath is the built-in target's plain-text route.
const TextPath = "/api/text"

// DrillCase is one resume drill against the reference target with a
// server behaviour switched on, as `streamprobe demo -drills` plays them.
type DrillCase struct {
	Server string // what the server does
	Drill  probe.Drill
	Setup  func(*refserver.Server)
	Want   probe.Verdict // the verdict the drill must give against this server
	// MCP, when set, runs the drill with the mcp dialect against the
	// reference MCP server on /mcp with this fault ("correct" for none).
	MCP refserver.MCPFault
	// Modern speaks MCP 2026-07-28 (the version the server offers);
	// otherwise the drill pins 2025-11-25, whose streams resume. Task asks
	// for the call to be made a task (2026-07-28).
	Modern, Task bool
	// LangGraph, when set, runs the drill with the langgraph dialect
	// against the reference LangGraph server with this fault ("correct"
	// for none); NotResumable makes the run without stream_resumable.
	LangGraph    refserver.LangGraphFault
	NotResumable bool
	// Resumable, when set, runs the drill with the ai-sdk-ui dialect
	// against the reference resumable AI SDK app with this fault
	// ("correct" for none).
	Resumable refserver.ResumableFault
	// WantOutcome, when set, is the outcome the drill must end with
	// instead of the sample's intended one (a resume that never ends
	// times out); Timeout bounds the run (0: the demo's 10 s).
	WantOutcome probe.Outcome
	Timeout     time.Duration
}

// Paths of the application servers on the built-in target: the LangGraph
// API server, and the resumable AI SDK app (its fault, then /api/chat).
const (
	LangGraphPath = "/langgraph/"
	ResumablePath = "/resumable/"
)

// ResumableURL is the chat route of the built-in target's resumable AI SDK
// app at base, with fault ("correct" for none).
func ResumableURL(base string, fault refserver.ResumableFault) string {
	return strings.TrimSuffix(base, "/") + ResumablePath + string(fault) + "/api/chat"
}

// Target is the target a demo drill probes on the reference server
// at base: the generic drill stream, or the MCP server's progress tool
// (12 steps 40 ms apart) with the drill's fault.
func (dd DrillCase) Target(base string) dialect.Target {
	switch {
	case dd.LangGraph != "":
		app := &dialect.App{AssistantID: string(dd.LangGraph)}
		if dd.LangGraph == "correct" {
			app.AssistantID = dialect.DefaultAssistant
		}
		if dd.NotResumable {
			app.StreamResumable = new(bool)
		}
		return dialect.Target{Name: "demo", URL: strings.TrimSuffix(base, "/") + strings.TrimSuffix(LangGraphPath, "/"), Dialect: "langgraph", App: app}
	case dd.Resumable != "":
		return dialect.Target{Name: "demo", URL: ResumableURL(base, dd.Resumable), Dialect: "ai-sdk-ui", EndData: "[DONE]", App: &dialect.App{Resumable: true}}
	}
	if dd.MCP == "" {
		return dialect.Target{Name: "demo", URL: base, Dialect: "sse", EndData: "[DONE]"}
	}
	f := dd.MCP
	if f == "correct" {
		f = ""
	}
	args := `{"steps":12,"interval_ms":40,"fault":"` + string(f) + `"`
	if dd.Task {
		args += `,"task":true`
	}
	version := "2025-11-25"
	if dd.Modern {
		version = ""
	}
	return dialect.Target{Name: "demo", URL: strings.TrimSuffix(base, "/") + "/mcp", Dialect: "mcp", MCPVersion: version,
		Tools: map[string]dialect.ToolCall{"long": {Name: "progress", Args: []byte(args + "}"), Task: dd.Task}}}
}

// ProbeDrill is the drill as the probe runs it on the case's target: with
// the ids checked as its dialect checks them by default (opaque for MCP).
func (dd DrillCase) ProbeDrill() probe.Drill {
	d := dd.Drill
	d.OpaqueIDs = slices.Contains(dialect.OpaqueIDDialects(), dd.Target("http://x").Dialect)
	return d
}

// EndsInError reports whether the case's run ends in an error, as its
// verdict says it must: no ids to resume by, or the call cancelled.
func (dd DrillCase) EndsInError() bool {
	switch dd.Want {
	case probe.VerdictNotSupported:
		return !dd.Modern // a 2026 call is not dropped: it has no resume
	case probe.VerdictCancelledOnDrop, probe.VerdictTaskCancelled, probe.VerdictResultUnreachable, probe.VerdictTaskLost:
		return true
	}
	return false
}

// mountMCP puts the reference MCP server on /mcp.
func mountMCP(s *refserver.Server) { s.Mount = map[string]http.Handler{"/mcp": refserver.NewMCP("")} }

// mountApps puts the reference LangGraph server and the resumable AI SDK
// app on their paths.
func mountApps(s *refserver.Server) {
	s.Mount = map[string]http.Handler{LangGraphPath: refserver.NewLangGraph(), ResumablePath: refserver.NewResumable()}
}

// Drills lists the drills of the demo: each verdict once.
func Drills() []DrillCase {
	return append([]DrillCase{
		{Server: "correct", Drill: probe.Drill{Name: probe.DrillDrop}, Want: probe.VerdictPass},
		{Server: "correct", Drill: probe.Drill{Name: probe.DrillDuplicate}, Want: probe.VerdictPass},
		{Server: "answers a stale id with an error event", Drill: probe.Drill{Name: probe.DrillStale}, Want: probe.VerdictStaleOK},
		{Server: "replays the sent id again (off-by-one)", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: func(s *refserver.Server) { s.Bug = refserver.Inclusive }, Want: probe.VerdictDuplicate},
		{Server: "resumes at id+2", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: func(s *refserver.Server) { s.Bug = refserver.Skip }, Want: probe.VerdictMissed},
		{Server: "ignores Last-Event-ID", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: func(s *refserver.Server) { s.Bug = refserver.Restart }, Want: probe.VerdictRestarted},
		{Server: "replays an id with different data", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: func(s *refserver.Server) { s.Bug = refserver.Mismatch }, Want: probe.VerdictMismatch},
		{Server: "streams the live tail for a stale id", Drill: probe.Drill{Name: probe.DrillStale}, Setup: func(s *refserver.Server) { s.Stale = refserver.StaleLive }, Want: probe.VerdictUndefinedStale},
		{Server: "MCP, correct event store", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: "correct", Want: probe.VerdictPass},
		{Server: "MCP, answers an unknown Last-Event-ID with 404", Drill: probe.Drill{Name: probe.DrillStale}, Setup: mountMCP, MCP: "correct", Want: probe.VerdictStaleOK},
		{Server: "MCP, replays from the sent id itself", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPDuplicate, Want: probe.VerdictDuplicate},
		{Server: "MCP, skips an event on resume", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPGap, Want: probe.VerdictMissed},
		{Server: "MCP, runs the tool again on resume", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPRestart, Want: probe.VerdictRestarted},
		{Server: "MCP, replays another call's messages", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPCrossStream, Want: probe.VerdictCrossStream},
		{Server: "MCP, live tail for an unknown Last-Event-ID", Drill: probe.Drill{Name: probe.DrillStale}, Setup: mountMCP, MCP: refserver.MCPStaleLive, Want: probe.VerdictUndefinedStale},
		{Server: "MCP, no event ids", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPNoIDs, Want: probe.VerdictNotSupported},
		{Server: "MCP, replays two events swapped", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPReorder, Want: probe.VerdictReordered},
		{Server: "MCP, cancels the call when the connection drops", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPCancelOnDrop, Want: probe.VerdictCancelledOnDrop},
		{Server: "MCP, leaves the resumed stream open after the response", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPLeaveOpen, Want: probe.VerdictLeftOpen},
		{Server: "MCP, keep-alives only for an unknown Last-Event-ID", Drill: probe.Drill{Name: probe.DrillStale}, Setup: mountMCP, MCP: refserver.MCPStaleQuiet, Want: probe.VerdictUndefinedStale},
		{Server: "MCP 2026-07-28, a plain call: no resume by design", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: "correct", Modern: true, Want: probe.VerdictNotSupported},
		{Server: "MCP 2026-07-28 task, correct", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: "correct", Modern: true, Task: true, Want: probe.VerdictPass},
		{Server: "MCP 2026-07-28 task, an unknown task id is an error", Drill: probe.Drill{Name: probe.DrillStale}, Setup: mountMCP, MCP: "correct", Modern: true, Task: true, Want: probe.VerdictStaleOK},
		{Server: "MCP 2026-07-28 task, cancelled by the request that made it", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPTaskCancelOwn, Modern: true, Task: true, Want: probe.VerdictTaskCancelled},
		{Server: "MCP 2026-07-28 task, a completed task without its result", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPTaskNoResult, Modern: true, Task: true, Want: probe.VerdictResultUnreachable},
		{Server: "MCP 2026-07-28 task, runs the tool again after the client was away", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPTaskRerun, Modern: true, Task: true, Want: probe.VerdictRestarted},
		{Server: "MCP 2026-07-28 task, the handle names a task never stored", Drill: probe.Drill{Name: probe.DrillDrop}, Setup: mountMCP, MCP: refserver.MCPTaskLost, Modern: true, Task: true, Want: probe.VerdictTaskLost},
		{Server: "MCP 2026-07-28 task, a working task for an unknown id", Drill: probe.Drill{Name: probe.DrillStale}, Setup: mountMCP, MCP: refserver.MCPTaskStaleLive, Modern: true, Task: true, Want: probe.VerdictUndefinedStale},
	}, appDrills()...)
}

// appDrills are the demo's drills of the application servers: LangGraph's
// rejoin and the AI SDK's resumable streams, each fault once.
func appDrills() []DrillCase {
	drop, stale, dup := probe.Drill{Name: probe.DrillDrop}, probe.Drill{Name: probe.DrillStale}, probe.Drill{Name: probe.DrillDuplicate}
	return []DrillCase{
		{Server: "LangGraph, correct rejoin", Drill: drop, Setup: mountApps, LangGraph: "correct", Want: probe.VerdictPass},
		{Server: "LangGraph, correct rejoin, twice from the same id", Drill: dup, Setup: mountApps, LangGraph: "correct", Want: probe.VerdictPass},
		{Server: "LangGraph, answers an id the run never had with an error event", Drill: stale, Setup: mountApps, LangGraph: "correct", Want: probe.VerdictStaleOK},
		{Server: "LangGraph, a run without stream_resumable (the JS server's shared queue)", Drill: drop, Setup: mountApps, LangGraph: "correct", NotResumable: true, Want: probe.VerdictMissed},
		{Server: "LangGraph, rejoins from the id itself", Drill: drop, Setup: mountApps, LangGraph: refserver.LangGraphRepeat, Want: probe.VerdictDuplicate},
		{Server: "LangGraph, rejoins one event late", Drill: drop, Setup: mountApps, LangGraph: refserver.LangGraphSkip, Want: probe.VerdictMissed},
		{Server: "LangGraph, rejoins from the run's first event", Drill: drop, Setup: mountApps, LangGraph: refserver.LangGraphRestart, Want: probe.VerdictRestarted},
		{Server: "LangGraph, live tail for an id the run never had", Drill: stale, Setup: mountApps, LangGraph: refserver.LangGraphStaleLive, Want: probe.VerdictUndefinedStale},
		{Server: "LangGraph, a rejoin that never ends", Drill: drop, Setup: mountApps, LangGraph: refserver.LangGraphNeverEnds, WantOutcome: probe.Timeout, Timeout: 3 * time.Second},
		{Server: "AI SDK resumable stream, correct replay", Drill: drop, Setup: mountApps, Resumable: "correct", Want: probe.VerdictPass},
		{Server: "AI SDK resumable stream, no stream for an unknown chat (204)", Drill: stale, Setup: mountApps, Resumable: "correct", Want: probe.VerdictStaleOK},
		{Server: "AI SDK resumable stream, 204 while the answer streams", Drill: drop, Setup: mountApps, Resumable: refserver.ResumableNoContentLive, Want: probe.VerdictMissed},
		{Server: "AI SDK resumable stream, the replay skips a part", Drill: drop, Setup: mountApps, Resumable: refserver.ResumableSkip, Want: probe.VerdictMissed},
		{Server: "AI SDK resumable stream, the replay repeats a part", Drill: drop, Setup: mountApps, Resumable: refserver.ResumableRepeat, Want: probe.VerdictDuplicate},
		{Server: "AI SDK resumable stream, generates the answer again", Drill: drop, Setup: mountApps, Resumable: refserver.ResumableRestart, Want: probe.VerdictRestarted},
		{Server: "AI SDK resumable stream, a resume that never ends", Drill: drop, Setup: mountApps, Resumable: refserver.ResumableNeverEnds, WantOutcome: probe.Timeout, Timeout: 3 * time.Second},
	}
}
