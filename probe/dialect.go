package probe

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// ChunkKind is what a dialect makes of one event.
type ChunkKind uint8

const (
	// Meta is an event that carries no output: metadata, a role-only or
	// empty delta, usage.
	Meta ChunkKind = iota
	// Effective is useful output that is not visible text: tool call
	// arguments, reasoning.
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
}

// Dialect turns a target and a sample into a request, and events into
// chunks. A dialect knows the wire format of one kind of API and nothing of
// the transport.
type Dialect interface {
	// Request builds the streaming request for sample s; resumable asks
	// for a stream that can be resumed (a drill will run).
	Request(t Target, s Sample, resumable bool) (resumeclient.Request, error)
	// Decode classifies one dispatched event. An error means the event
	// could not be understood: a protocol error.
	Decode(t Target, ev *resumeclient.Event) (Chunk, error)
	// EOFIsEnd reports whether a clean end of the body is the end marker.
	EOFIsEnd(t Target) bool
	// Resumable reports whether the dialect can resume a stream.
	Resumable() bool
	// Cursor returns the resume cursor of a dispatched event and whether
	// the event carried one. The string may share the event's memory, so
	// it is valid as long as the event is (until the next one is read):
	// the run copies what it keeps.
	Cursor(ev *resumeclient.Event, ch Chunk) (string, bool)
	// Resume builds the request that resumes orig after cursor; responseID
	// is the stream's id where the dialect needs one.
	Resume(orig resumeclient.Request, cursor, responseID string) (resumeclient.Request, error)
	// CursorLabel names a resume cursor as the request carries it, for
	// messages ("Last-Event-ID: 7", "starting_after=7").
	CursorLabel(cursor string) string
	// StaleCursor is the stale drill's default cursor: one the server
	// cannot know.
	StaleCursor() string
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
}

// DialectNames lists the known dialects, sorted.
func DialectNames() []string {
	names := make([]string, 0, len(Dialects))
	for n := range Dialects {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Target is one endpoint to probe.
type Target struct {
	Name    string
	URL     string
	Dialect string
	// Method overrides the dialect's method.
	Method string
	// Header is sent with every request (secrets included: it never goes
	// into a record or a log line).
	Header http.Header
	// Body, when not nil, replaces the body the dialect would build.
	Body []byte
	// Model is sent by chat dialects.
	Model string
	// Tools are the tool calls of the mcp dialect by sample name; a
	// sample with none calls DefaultMCPTools' (see MCPTool).
	Tools map[string]ToolCall
	// RunID is the run's request id, set by Run: a dialect whose messages
	// name their call (MCP's JSON-RPC id and progress token) names it so.
	RunID string
	// EndEvent and EndData are the generic dialect's end markers: an event
	// with this type, or with exactly this data. Both empty: a clean end of
	// the body is the end.
	EndEvent string
	EndData  string
	// MaxEventSize bounds one event; 0 means the transport's default.
	MaxEventSize int
	// InsecureSkipVerify turns off TLS certificate verification for this
	// target only. Callers log it loudly; it is never the default.
	InsecureSkipVerify bool
	// MaxChunks bounds the content chunks of one run; 0 means
	// DefaultMaxChunks. A stream with more ends as a protocol_error.
	MaxChunks int
	// KeepAlive lets runs reuse a kept-alive connection (with a client
	// from NewClient); by default every run opens a fresh one.
	KeepAlive bool
	// HTTP2 offers HTTP/2 over TLS (as browsers do); by default a client
	// from NewClient speaks HTTP/1.1, as the OpenAI and Anthropic SDKs do.
	HTTP2 bool
	// NoResume turns off the resume after a drop by the server (for
	// dialects that can resume): such a drop is then an upstream_error.
	// Drills still resume.
	NoResume bool
}

// sseDialect is the generic dialect: every event with non-empty data is a
// chunk.
type sseDialect struct{}

func (sseDialect) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	method := t.Method
	if method == "" {
		method = http.MethodGet
		if t.Body != nil {
			method = http.MethodPost
		}
	}
	h := t.Header.Clone()
	if t.Body != nil && h.Get("Content-Type") == "" {
		if h == nil {
			h = http.Header{}
		}
		h.Set("Content-Type", "application/json")
	}
	return resumeclient.Request{Method: method, URL: t.URL, Header: h, Body: t.Body}, nil
}

func (sseDialect) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if t.EndEvent != "" && string(ev.Type) == t.EndEvent {
		return Chunk{Kind: End}, nil
	}
	if t.EndData != "" && string(ev.Data) == t.EndData {
		return Chunk{Kind: End}, nil
	}
	if len(ev.Data) > 0 {
		return Chunk{Kind: Text}, nil
	}
	return Chunk{Kind: Meta}, nil
}

func (sseDialect) EOFIsEnd(t Target) bool { return t.EndEvent == "" && t.EndData == "" }

func (sseDialect) Resumable() bool { return true }

// Cursor is the SSE last event ID, from an event that carried an id field
// (the id persists across events, so the probe keeps the last one). It is
// the event's own bytes, not a copy: an event allocates nothing.
func (sseDialect) Cursor(ev *resumeclient.Event, _ Chunk) (string, bool) {
	if !ev.HasID {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(ev.ID), len(ev.ID)), true
}

// Resume resends the request with Last-Event-ID.
func (sseDialect) Resume(orig resumeclient.Request, cursor, _ string) (resumeclient.Request, error) {
	orig.LastEventID = cursor
	return orig, nil
}

func (sseDialect) CursorLabel(id string) string { return "Last-Event-ID: " + id }

func (sseDialect) StaleCursor() string { return DefaultStaleID }

// noResume is for dialects without a resume protocol.
type noResume struct{}

func (noResume) Resumable() bool                                  { return false }
func (noResume) Cursor(*resumeclient.Event, Chunk) (string, bool) { return "", false }
func (noResume) Resume(resumeclient.Request, string, string) (resumeclient.Request, error) {
	return resumeclient.Request{}, errors.New("this dialect cannot resume")
}
func (noResume) CursorLabel(id string) string { return "cursor " + id }
func (noResume) StaleCursor() string          { return "" }

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

// keyHeaderer is a dialect whose API takes its key in a header of its
// own rather than as a bearer token.
type keyHeaderer interface {
	KeyHeader() string
}

// KeyHeader names the header a target's key (bearer_env, bearer_file) is
// sent in for dialect, and the prefix of its value: Authorization with
// "Bearer " unless the dialect's API has a header of its own.
func KeyHeader(dialect string) (name, prefix string) {
	if k, ok := Dialects[dialect].(keyHeaderer); ok {
		return k.KeyHeader(), ""
	}
	return "Authorization", "Bearer "
}

// framer is a dialect whose answer is not Server-Sent Events.
type framer interface {
	Framing() resumeclient.Framing
}

// HasEventIDs reports whether dialect's stream can carry event ids (it is
// Server-Sent Events): the drills resume by them, so none can run on a
// dialect without (Ollama's NDJSON).
func HasEventIDs(dialect string) bool {
	f, ok := Dialects[dialect].(framer)
	return !ok || f.Framing().HasEventIDs()
}

// NoEventIDs lists the dialects whose streams carry no event ids.
func NoEventIDs() []string {
	var out []string
	for _, n := range DialectNames() {
		if !HasEventIDs(n) {
			out = append(out, n)
		}
	}
	return out
}

// LookupDialect returns the dialect called name, or an error that lists the
// known ones.
func LookupDialect(name string) (Dialect, error) {
	d, ok := Dialects[name]
	if !ok {
		return nil, fmt.Errorf("unknown dialect %q (known: %s)", name, strings.Join(DialectNames(), ", "))
	}
	return d, nil
}

// LookupSample returns the sample called name, or an error that lists the
// known ones.
func LookupSample(name string) (Sample, error) {
	s, ok := Samples[name]
	if !ok || !slices.Contains(SampleNames, name) {
		return Sample{}, fmt.Errorf("unknown sample %q (known: %s)", name, strings.Join(SampleNames, ", "))
	}
	return s, nil
}
