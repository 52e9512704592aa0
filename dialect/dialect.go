// Package dialect holds the wire formats streamprobe speaks, one file per
// API: each turns a target and a fixed sample into a request, and each
// event (or line) of the answer into a Chunk (visible text, other useful
// output, metadata, the end, an error), and declares what the engine needs
// around the timed request: how it resumes a lost stream (Resumer), a
// session before and after it (Session), a framing other than Server-Sent
// Events (Framer), the header an API key goes in (KeyHeaderer). The
// samples are here too, fixed and versioned. A dialect knows nothing of the
// transport, the timeline or the sinks.
package dialect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// ChunkKind is what a dialect makes of one event.
type ChunkKind uint8

const (
	// Meta is an event that carries no output: metadata, a role-only or
	// empty delta, usage.
	Meta ChunkKind = iota
	// Effective is useful output that is not visible text: tool call
	// arguments (a hosted tool's input included), reasoning, images.
	Effective
	// Text is visible text: a content chunk.
	Text
	// End is the end marker.
	End
	// Failed is an error reported inside the stream.
	Failed
	// Liveness is a keep-alive event (a ping): counted with the comments,
	// never an event of the answer.
	Liveness
)

// Chunk is the meaning of one event.
type Chunk struct {
	Kind ChunkKind
	// Usage, when HasUsage, carries token counts found in the event (a
	// value, not a pointer: a chunk never allocates).
	Usage    Tokens
	HasUsage bool
	// Message is the provider's error message for Failed: scrubbed of the
	// target's secrets, then bounded to MaxMessage bytes of printable text.
	Message string
	// Cursor is the resume position the event carries in its body (the
	// Responses API's sequence_number), for dialects that resume by one.
	Cursor    string
	HasCursor bool
	// ResponseID names the stream to resume (the Responses API's id).
	ResponseID string
	// Final marks the stream's last event for a dialect with no end
	// marker (Gemini's chunk with a finishReason): a clean end of the body
	// after it is the end, at the time the body ended.
	Final bool
	// IsEnd marks a content chunk that is also the end (MCP's JSON-RPC
	// response to the call: its result is the last content, and there is
	// no end marker after it).
	IsEnd bool
	// Unrelated marks a message of the protocol that is not part of the
	// answer (MCP: a request or notification of the server's unrelated to
	// the call): counted, never a chunk, so kept out of the gaps.
	Unrelated bool
	// Foreign marks a message that belongs to another stream (MCP:
	// progress for another token, the response to another request). On a
	// resumed connection it is a replay from another stream: the
	// cross_stream verdict.
	Foreign bool
	// Seq is a position the body carries that must grow along the
	// stream (MCP's progress value), when HasSeq: on a resume, a new
	// event whose Seq is back at the first one means the server started
	// the work over (restarted).
	Seq    float64
	HasSeq bool
	// Reply, when set, is the answer the protocol requires to a request
	// of the server's (MCP's ping): the engine sends it through the
	// dialect's Replier, and answers nothing else.
	Reply []byte
	// Reasoning marks an Effective chunk that is the model's reasoning (a
	// thinking trace, its summary): the record counts it apart.
	Reasoning bool
	// Refusal marks a Text chunk whose text is the model's refusal
	// (OpenAI's delta.refusal, the Responses API's refusal deltas): the
	// run ends refused.
	Refusal bool
	// Finish is why the answer stopped, when the event says; Message
	// then names the provider's own reason where the run ends refused.
	Finish Finish
	// Content is a Text chunk's visible text as the event carries it,
	// for the inline reasoning block (Think); empty for the dialects
	// whose text has none (sse, mcp).
	Content Content
	// Task, when set, is the state of the task the call was made (MCP
	// Tasks): its handle, or a poll's answer. The engine polls it through
	// the dialect's TaskPoller until a terminal status.
	Task *TaskState
	// Begin marks the first event of an answer (the AI SDK's start
	// part): a Replay resume whose first event is one replayed the
	// answer from its start.
	Begin bool
	// Done marks the answer as complete (the AI SDK's finish part): only
	// the end marker may follow, so a Replay resume answered 204 (no
	// active stream) after it lost nothing.
	Done bool
}

// TaskState is a task's state as one answer gave it.
type TaskState struct {
	// ID is the task's id, what a poll asks for (the server's string:
	// shown only through the record's gate).
	ID string
	// Status is working, input_required, completed, failed or cancelled
	// (scrubbed and bounded); Message the server's statusMessage.
	Status, Message string
	// Created is the task's createdAt: a new one for the same id means
	// the work started over.
	Created string
	// Poll is the poll interval the server asked for; 0 none.
	Poll time.Duration
	// Handle marks the call's answer that made the task.
	Handle bool
	// NoResult marks a completed task whose answer carried no result: the
	// result is asked for with the next poll (tasks/result).
	NoResult bool
}

// TaskPoller is a dialect whose calls may be made tasks: PollTask is the
// request that asks for the task's state after st (the nth poll), and
// CancelTask asks the server to cancel it.
type TaskPoller interface {
	PollTask(t Target, req resumeclient.Request, st TaskState, n int) (resumeclient.Request, error)
	CancelTask(ctx context.Context, c *resumeclient.Client, t Target, req resumeclient.Request, id string) error
}

// Unresumable is a dialect some of whose streams cannot be resumed by
// design (MCP 2026-07-28): Unresumable says why, for the request the
// session setup settled on, or "". A drill does not drop such a stream.
type Unresumable interface {
	Unresumable(req resumeclient.Request) string
}

// Versioner is a dialect that settles a protocol version with the server
// (MCP): ProtocolVersion names it, for the record.
type Versioner interface {
	ProtocolVersion(req resumeclient.Request) string
}

// CloseCanceller is a Session dialect whose call, on the version settled,
// is cancelled by closing its stream, not by a message (MCP 2026-07-28).
type CloseCanceller interface {
	CancelsByClose(req resumeclient.Request) bool
}

// Dialect turns a target and a sample into a request, and events into
// chunks. A dialect knows the wire format of one kind of API and nothing of
// the transport. What the engine needs besides (requests before and after
// the timed one, how a lost stream is resumed, a framing other than
// Server-Sent Events, the header an API key goes in) a dialect declares:
// its Resumer, and the Session, Framer and KeyHeaderer interfaces. The
// engine asks; it never checks a dialect's name.
type Dialect interface {
	// Request builds the streaming request for sample s; resumable asks
	// for a stream that can be resumed (a drill will run).
	Request(t Target, s Sample, resumable bool) (resumeclient.Request, error)
	// Decode classifies one dispatched event. An error means the event
	// could not be understood: a protocol error. A dialect whose Request
	// asks for resumeclient.FramingSSETrailer also gets the text that
	// came after the last event (resumeclient.KindTrailer): Failed when
	// it is an error the dialect can name.
	Decode(t Target, ev *resumeclient.Event) (Chunk, error)
	// EOFIsEnd reports whether a clean end of the body is the end marker.
	EOFIsEnd(t Target) bool
	// Resumer says how the dialect resumes a stream it lost; nil when it
	// cannot (a drill then runs as a plain request, named not_supported).
	Resumer() Resumer
}

// Resumer is how a dialect resumes a stream it lost, after a drop by the
// server or a drill's: the position each event carries (its cursor), and
// the request that asks for what came after it. The events of a resumed
// stream continue after the cursor sent; the engine checks that they do
// (every event once, in order) by the cursors they carry.
type Resumer interface {
	// Cursor returns the resume cursor of a dispatched event and whether
	// the event carried one. The string may share the event's memory, so
	// it is valid as long as the event is (until the next one is read):
	// the run copies what it keeps.
	Cursor(ev *resumeclient.Event, ch Chunk) (string, bool)
	// Resume builds the request that resumes orig after cursor; responseID
	// is the stream's id (Chunk.ResponseID) where the dialect needs one.
	Resume(orig resumeclient.Request, cursor, responseID string) (resumeclient.Request, error)
	// Label names a cursor as the resume request carries it, for
	// messages ("Last-Event-ID: 7", "starting_after=7").
	Label(cursor string) string
	// StaleCursor is the stale drill's default cursor: one the server
	// cannot know.
	StaleCursor() string
}

// ResumeMode is how the answer to a resume relates to what the lost
// connection delivered.
type ResumeMode uint8

const (
	// AfterCursor: the resume sends the cursor of the last event and the
	// server goes on right after it; checked by the cursors the events
	// carry (the default).
	AfterCursor ResumeMode = iota
	// Replay: the resume sends no cursor of the stream's, and the server
	// replays the answer from its start, then goes on live; the client
	// drops what it already had (the AI SDK's resumable streams, whose
	// useChat resets on the start part). Checked by each event's position
	// and a hash of its type and data.
	Replay
)

// Moder is a Resumer whose resumes are not AfterCursor.
type Moder interface {
	Mode() ResumeMode
}

// ModeOf is rs's resume mode.
func ModeOf(rs Resumer) ResumeMode {
	if m, ok := rs.(Moder); ok {
		return m.Mode()
	}
	return AfterCursor
}

// StreamHeader is a Resumer that learns the id of the stream to resume
// from the first response's headers (LangGraph's Content-Location names
// the run) rather than from an event: the engine hands it those headers,
// and passes what it returns to Resume as responseID.
type StreamHeader interface {
	StreamID(h http.Header) string
}

// TargetResumer is a dialect whose resume depends on the target (an AI
// SDK route resumes only when the app says so, at a URL of its own): the
// engine asks ResumerFor instead of Resumer.
type TargetResumer interface {
	ResumerFor(t Target) Resumer
}

// ResumerOf is how d resumes a stream of target t; nil when it cannot.
func ResumerOf(d Dialect, t Target) Resumer {
	if tr, ok := d.(TargetResumer); ok {
		return tr.ResumerFor(t)
	}
	return d.Resumer()
}

// Session is a dialect whose stream lives in a session of its protocol:
// requests before the stream open it (and add the headers every later
// request carries), a request after it ends it, and the cancel sample
// cancels by a message of the protocol, not by closing the connection.
type Session interface {
	// OpenSession runs the requests before the stream, adding the
	// session's headers to req (the stream's request, whose headers the
	// resumes and the cancel copy). An error that wraps ErrSetup is the
	// server's wrong answer (a protocol_error), any other one the
	// transport's.
	OpenSession(ctx context.Context, c *resumeclient.Client, t Target, req *resumeclient.Request) error
	// CloseSession ends the session (its answer is not judged).
	CloseSession(ctx context.Context, c *resumeclient.Client, t Target, req resumeclient.Request)
	// CancelCall asks the server to cancel the call: the stream is then
	// read on, to see whether a result still comes and how soon it ends.
	CancelCall(ctx context.Context, c *resumeclient.Client, t Target, req resumeclient.Request) error
}

// StreamCanceler is a Session whose cancel names the stream (LangGraph's
// run id): the engine calls CancelStream, with the stream's id (from
// StreamHeader or an event's ResponseID), instead of CancelCall.
type StreamCanceler interface {
	CancelStream(ctx context.Context, c *resumeclient.Client, t Target, req resumeclient.Request, streamID string) error
}

// SetupNamer is a Session that names the requests its setup makes, for
// the output ("POST /threads").
type SetupNamer interface {
	SetupName() string
}

// SetupName names the session setup of dialect: its SetupNamer's, or
// MCP's initialize and notifications/initialized.
func SetupName(dialect string) string {
	if n, ok := Dialects[dialect].(SetupNamer); ok {
		return n.SetupName()
	}
	return "initialize, notifications/initialized"
}

// ErrSetup marks a session setup the server answered wrongly (not a
// transport error): the run is a protocol_error.
var ErrSetup = errors.New("session setup")

// TargetError is a target a dialect cannot build its request from: Key
// names the target's setting at fault ("model", "url"; "" the target as a
// whole), so that the config's check names file:line:key before anything
// runs.
type TargetError struct {
	Key string
	Err error
}

func (e *TargetError) Error() string { return e.Err.Error() }
func (e *TargetError) Unwrap() error { return e.Err }

// setupError is an ErrSetup that names its protocol: "mcp: initialize: ...".
type setupError string

func (e setupError) Error() string { return string(e) }
func (e setupError) Unwrap() error { return ErrSetup }

// noResume is embedded by the dialects that cannot resume.
type noResume struct{}

func (noResume) Resumer() Resumer { return nil }

// Replier is a dialect that answers a request of the server's during the
// stream (Chunk.Reply): MCP's ping, which the protocol requires a client
// to answer. The engine sends at most a few, in the background, bounded in
// time.
type Replier interface {
	Reply(ctx context.Context, c *resumeclient.Client, t Target, req resumeclient.Request, body []byte) error
}

// WaitError is a wait that ended (a timeout) and what the server had sent
// by then (What: "initialize was answered (HTTP 200, text/event-stream)
// with 2 events and no response to it"), for a message that says what
// came rather than only what did not.
type WaitError struct {
	What string
	Err  error
}

func (e *WaitError) Error() string { return e.What + ": " + e.Err.Error() }
func (e *WaitError) Unwrap() error { return e.Err }

// EndCloser is a Resumer whose server should close a resumed stream
// after its end (MCP: after the call's response, the GET's stream): the
// engine reads on a little after the end, and names a stream left open.
type EndCloser interface {
	ServerClosesAfterEnd() bool
}

// OpaqueIDer is a Resumer whose server's event ids need not count up by
// one (MCP 2025-11-25 asks only that they be unique): unless the target
// says otherwise (ids = "int"), a resume is checked with opaque ids.
type OpaqueIDer interface {
	OpaqueIDs() bool
}

// OpaqueIDDialects lists the dialects whose ids are opaque by default.
func OpaqueIDDialects() []string {
	var out []string
	for _, n := range Names() {
		if rs := Dialects[n].Resumer(); rs != nil {
			if o, ok := rs.(OpaqueIDer); ok && o.OpaqueIDs() {
				out = append(out, n)
			}
		}
	}
	return out
}

// EndNamer is a dialect whose end is not an end marker, for the messages
// ("no response to the call within 30s").
type EndNamer interface {
	EndName() string
}

// Framer is a dialect whose answer is not Server-Sent Events.
type Framer interface {
	Framing() resumeclient.Framing
}

// Signer is a dialect whose requests are signed with AWS SigV4 for a
// service (Bedrock's "bedrock") unless the target sends a bearer key:
// the run's probe.Options.Sign is then set from the AWS credentials.
type Signer interface {
	SigningService() string
}

// SigningService is the service dialect's requests are signed for with
// SigV4, "" for a dialect that does not sign.
func SigningService(dialect string) string {
	if s, ok := Dialects[dialect].(Signer); ok {
		return s.SigningService()
	}
	return ""
}

// Signed lists the dialects whose requests are signed with SigV4.
func Signed() []string {
	var out []string
	for _, n := range Names() {
		if SigningService(n) != "" {
			out = append(out, n)
		}
	}
	return out
}

// KeyHeaderer is a dialect whose API takes its key in a header of its
// own rather than as a bearer token.
type KeyHeaderer interface {
	KeyHeader() string
}

// Dialects are the known dialects by name.
var Dialects = map[string]Dialect{
	"sse":                sseDialect{},
	"openai-chat":        openAIChat{},
	"openai-responses":   openAIResponses{},
	"anthropic-messages": anthropicMessages{},
	"gemini":             gemini{},
	"ollama":             ollama{},
	"ai-sdk-ui":          aiSDKUI{},
	"mcp":                mcpDialect{},
	"langgraph":          langGraph{},
	"text":               text{},
	"cohere":             cohere{},
	"bedrock":            bedrock{},
	"vertex-gemini":      vertexGemini{},
	"vertex-anthropic":   vertexAnthropic{},
}

// Names lists the known dialects, sorted.
func Names() []string {
	names := make([]string, 0, len(Dialects))
	for n := range Dialects {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Resumable lists, sorted, the dialects that resume a lost stream (their
// Resumer is not nil): the ones a drill checks.
func Resumable() []string {
	var out []string
	for _, n := range Names() {
		if Dialects[n].Resumer() != nil {
			out = append(out, n)
		}
	}
	return out
}

// KeyHeaders lists, sorted by dialect, where the dialects that take an
// API key in a header of their own (KeyHeaderer) send it, as "Header
// (dialect)"; every other dialect sends it as "Authorization: Bearer".
func KeyHeaders() []string {
	var out []string
	for _, n := range Names() {
		if kh, ok := Dialects[n].(KeyHeaderer); ok {
			out = append(out, kh.KeyHeader()+" ("+n+")")
		}
	}
	return out
}

// apiURL completes a base URL (http://host, http://host/v1) to an API
// path such as /chat/completions; a URL that already ends in it is kept.
func apiURL(u, path string) string {
	base, query, _ := strings.Cut(u, "?")
	switch {
	case strings.HasSuffix(base, path):
	case strings.HasSuffix(base, "/v1"), strings.HasSuffix(base, "/v1/"):
		base = strings.TrimSuffix(base, "/") + path
	default:
		base = strings.TrimSuffix(base, "/") + "/v1" + path
	}
	if query != "" {
		return base + "?" + query
	}
	return base
}

// jsonHeaders returns t's headers with a JSON content type.
func jsonHeaders(t Target) http.Header {
	h := t.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	return h
}

// KeyHeader names the header a target's key (bearer_env, bearer_file) is
// sent in for dialect, and the prefix of its value: Authorization with
// "Bearer " unless the dialect's API has a header of its own.
func KeyHeader(dialect string) (name, prefix string) {
	if k, ok := Dialects[dialect].(KeyHeaderer); ok {
		return k.KeyHeader(), ""
	}
	return "Authorization", "Bearer "
}

// HasEventIDs reports whether dialect's stream can carry event ids (it is
// Server-Sent Events): the drills resume by them, so none can run on a
// dialect without (Ollama's NDJSON).
func HasEventIDs(dialect string) bool {
	f, ok := Dialects[dialect].(Framer)
	return !ok || f.Framing().HasEventIDs()
}

// NoEventIDs lists the dialects whose streams carry no event ids.
func NoEventIDs() []string {
	var out []string
	for _, n := range Names() {
		if !HasEventIDs(n) {
			out = append(out, n)
		}
	}
	return out
}

// Lookup returns the dialect called name, or an error that lists the
// known ones.
func Lookup(name string) (Dialect, error) {
	d, ok := Dialects[name]
	if !ok {
		return nil, fmt.Errorf("unknown dialect %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return d, nil
}
