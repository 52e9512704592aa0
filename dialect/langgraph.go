package dialect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// langGraph is the LangGraph API (LangGraph Agent Server; in JS the
// server of @langchain/langgraph-api): a thread made for the run (POST
// /threads), one run streamed on it (POST /threads/{t}/runs/stream with
// stream_resumable), rejoined after a drop with GET
// /threads/{t}/runs/{r}/stream and Last-Event-ID (the run id is the last
// segment of the first answer's Content-Location), and the thread deleted
// after the run. The target's URL is the server's base. See
// docs/dialects.md.
//
// Its events: metadata (the run id), values and updates (the graph's
// state: metadata here), messages (messages-tuple mode: [message chunk,
// metadata]; the chunk's content is the visible text), messages/partial
// (messages mode: the messages so far), error; ids count the run's log
// from 0, written after the data. There is no end event: the end of the
// body is the end of the run's stream.
type langGraph struct{}

// Defaults of a langgraph target.
const (
	// DefaultAssistant is the assistant a run is made on when the target
	// names none: the graph id of the server's graph called agent (the
	// LangGraph templates' name).
	DefaultAssistant = "agent"
)

// DefaultStreamModes are the stream modes a run asks for when the
// target names none: the message chunks (the visible text) and the
// state after each step.
var DefaultStreamModes = []string{"messages-tuple", "values"}

// StreamModes are the stream modes the LangGraph API knows.
var StreamModes = []string{"values", "messages", "messages-tuple", "updates", "events", "tasks", "checkpoints", "debug", "custom"}

type langGraphRun struct {
	AssistantID     string          `json:"assistant_id"`
	Input           json.RawMessage `json:"input"`
	StreamMode      []string        `json:"stream_mode"`
	StreamResumable bool            `json:"stream_resumable"`
	OnDisconnect    string          `json:"on_disconnect"`
}

type langGraphMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// langGraphRuns is the path the run is posted to, under the thread's.
const langGraphRuns = "/runs/stream"

// Request posts the run; OpenSession puts it on the thread it makes. A
// drop never cancels the run (on_disconnect continue), so a client can
// rejoin it.
func (langGraph) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	switch u, err := url.Parse(t.URL); {
	case err != nil:
		return resumeclient.Request{}, &TargetError{Key: "url", Err: fmt.Errorf("langgraph: %w", err)}
	case u.RawQuery != "" || u.Fragment != "":
		return resumeclient.Request{}, &TargetError{Key: "url", Err: errors.New("langgraph: the URL is the server's base, to which /threads is appended: it takes no query (send an API key with header_env, as x-api-key)")}
	}
	body := t.Body
	if body == nil {
		input := json.RawMessage(t.app().Input)
		if input == nil {
			in, err := json.Marshal(map[string][]langGraphMessage{"messages": {{Role: "user", Content: s.Prompt}}})
			if err != nil {
				return resumeclient.Request{}, fmt.Errorf("langgraph: encoding input: %w", err)
			}
			input = in
		}
		modes := t.app().StreamModes
		if modes == nil {
			modes = DefaultStreamModes
		}
		var err error
		body, err = json.Marshal(langGraphRun{AssistantID: orDefault(t.app().AssistantID, DefaultAssistant), Input: input, StreamMode: modes,
			StreamResumable: t.app().StreamResumable == nil || *t.app().StreamResumable, OnDisconnect: "continue"})
		if err != nil {
			return resumeclient.Request{}, &TargetError{Key: "input", Err: fmt.Errorf("langgraph: encoding the run: %w", err)}
		}
	}
	method := t.Method
	if method == "" {
		method = http.MethodPost
	}
	return resumeclient.Request{Method: method, URL: strings.TrimSuffix(t.URL, "/") + langGraphRuns, Header: jsonHeaders(t), Body: body}, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func (langGraph) EOFIsEnd(Target) bool { return true }

func (langGraph) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	typ := string(ev.Type)
	switch typ {
	case "end":
		return Chunk{Kind: End}, nil
	case "error":
		return Chunk{Kind: Failed, Message: langGraphError(t, ev.Data)}, nil
	case "messages", "messages/partial":
	case "metadata":
		var m langGraphMeta
		if err := m.decode(ev.Data); err != nil {
			return Chunk{}, err
		}
		return Chunk{Kind: Meta, ResponseID: string(m.runID.value())}, nil
	default:
		// values, updates (node updates), custom, debug, tasks,
		// checkpoints, events, messages/metadata, messages/complete: the
		// graph's state and bookkeeping, no output of the answer's.
		return Chunk{Kind: Meta}, nil
	}
	var m langGraphMessages
	if err := m.decode(ev.Data); err != nil {
		return Chunk{}, err
	}
	return m.chunk(typ == "messages"), nil
}

// langGraphError is an error event's message: {"error","message"} or a
// string ("Run not found").
func langGraphError(t Target, data []byte) string {
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	var s string
	switch {
	case json.Unmarshal(data, &s) == nil && s != "":
		return "error event: " + boundMessage(t, s)
	case json.Unmarshal(data, &e) == nil && (e.Error != "" || e.Message != ""):
		msg := e.Error
		if e.Message != "" {
			msg = strings.TrimPrefix(msg+": "+e.Message, ": ")
		}
		return "error event: " + boundMessage(t, msg)
	}
	return "error event"
}

// langGraphMeta is what the probe reads of a metadata event: {"run_id"}.
type langGraphMeta struct {
	s     jscan
	runID jstr
}

var langGraphMetaFields = []string{"run_id"}

func (m *langGraphMeta) decode(data []byte) error {
	return m.s.scan(data, func() bool {
		return m.s.object("", "", langGraphMetaFields, func(int) bool { return m.s.strField(&m.runID, "", "run_id") })
	}, "langgraph", "metadata event")
}

// langGraphMessages is what the probe reads of a messages event, with
// encoding/json's semantics (see jscan): an array of message chunks
// (messages-tuple: the chunk, then its metadata, which is skipped;
// messages/partial: the messages so far), each {"content": a string or
// an array of blocks {"type","text","reasoning","thinking"},
// "additional_kwargs":{"reasoning_content"},"tool_call_chunks":[{"args"}],
// "usage_metadata":{"input_tokens","output_tokens"}}; of the strings only
// their emptiness is kept.
type langGraphMessages struct {
	s    jscan
	msgs jslice[langGraphChunk]
}

type langGraphChunk struct {
	text, reasoning, toolArgs bool
	usage                     tokenCounts
}

var (
	langGraphMsgFields   = []string{"content", "additional_kwargs", "tool_call_chunks", "usage_metadata"}
	langGraphBlockFields = []string{"type", "text", "reasoning", "thinking"}
	langGraphKwargs      = []string{"reasoning_content"}
	langGraphToolFields  = []string{"args"}
	langGraphUsage       = []string{"input_tokens", "output_tokens"}
)

func (m *langGraphMessages) decode(data []byte) error {
	return m.s.scan(data, func() bool {
		return array(&m.s, &m.msgs, "", "", func(i int) bool { return m.message(m.msgs.elem(i)) })
	}, "langgraph", "messages event")
}

// message reads one element: a message chunk, or the tuple's metadata
// (an object without those fields reads as an empty chunk). Any value
// that is not an object is skipped: nothing of the answer's.
func (m *langGraphMessages) message(c *langGraphChunk) bool {
	s := &m.s
	*c = langGraphChunk{}
	return objectOrSkip(s, langGraphMsgFields, func(k int) bool {
		switch k {
		case 0:
			return m.content(c)
		case 1:
			return objectOrSkip(s, langGraphKwargs, func(int) bool {
				var r bool
				ok := nonEmptyAny(s, &r)
				c.reasoning = c.reasoning || r
				return ok
			})
		case 2:
			if s.data[s.i] != '[' {
				return s.skip()
			}
			var q jslice[struct{}]
			return array(s, &q, "messages", "tool_call_chunks", func(int) bool {
				return objectOrSkip(s, langGraphToolFields, func(int) bool {
					var a bool
					ok := nonEmptyAny(s, &a)
					c.toolArgs = c.toolArgs || a
					return ok
				})
			})
		default:
			if s.data[s.i] != '{' {
				return s.skip()
			}
			return s.tokens(&c.usage, "messages", "usage_metadata", langGraphUsage)
		}
	})
}

// content reads a message's content: a string (the text), or an array of
// content blocks (text, reasoning, thinking).
func (m *langGraphMessages) content(c *langGraphChunk) bool {
	s := &m.s
	switch s.data[s.i] {
	case '"':
		v, ok := s.str()
		c.text = c.text || ok && !v.empty()
		return ok
	case '[':
	default:
		return s.skip()
	}
	var q jslice[struct{}]
	return array(s, &q, "messages", "content", func(int) bool {
		if s.data[s.i] != '{' {
			return s.skip()
		}
		var typ jstr
		var isStr, text, reasoning bool
		ok := s.object("", "", langGraphBlockFields, func(k int) bool {
			if k == 0 {
				return s.anyStr(&typ, &isStr)
			}
			var v bool
			ok := nonEmptyAny(s, &v)
			if k == 1 {
				text = text || v
			} else {
				reasoning = reasoning || v
			}
			return ok
		})
		if !ok {
			return false
		}
		switch {
		case typ.is("text") && text:
			c.text = true
		case (typ.is("reasoning") || typ.is("thinking")) && reasoning:
			c.reasoning = true
		}
		return true
	})
}

// chunk classifies the messages read: visible text, else reasoning or a
// tool call's arguments, else metadata. tuple: only the first element is
// the message.
func (m *langGraphMessages) chunk(tuple bool) Chunk {
	n := m.msgs.n
	if tuple {
		n = min(n, 1)
	}
	c := Chunk{Kind: Meta}
	for i := range n {
		e := m.msgs.at(i)
		switch {
		case e.text:
			c.Kind = Text
		case e.reasoning && (c.Kind == Meta || c.Kind == Effective):
			c.Kind, c.Reasoning = Effective, true
		case e.toolArgs && c.Kind == Meta:
			c.Kind = Effective
		}
		if e.usage.set && (e.usage.in > 0 || e.usage.out > 0) {
			c.Usage, c.HasUsage = Tokens{Prompt: int(e.usage.in), Completion: int(e.usage.out)}, true
		}
	}
	return c
}

// langGraphThread is the answer to POST /threads.
type langGraphThread struct {
	ThreadID string `json:"thread_id"`
}

// errLangGraphSetup marks the server's wrong answers to the thread's
// creation: an ErrSetup, named "langgraph: ...".
var errLangGraphSetup error = setupError("langgraph")

// OpenSession makes the run's thread (POST /threads) and puts the run on
// it.
func (langGraph) OpenSession(ctx context.Context, c *resumeclient.Client, t Target, req *resumeclient.Request) error {
	base := strings.TrimSuffix(req.URL, langGraphRuns)
	h := req.Header.Clone()
	st, err := c.Open(ctx, resumeclient.Request{Method: http.MethodPost, URL: base + "/threads", Header: h,
		Body: []byte(`{"metadata":{"created_by":"streamprobe"}}`), Framing: resumeclient.FramingSSEOrJSON})
	if err != nil {
		var se *resumeclient.StatusError
		if errors.As(err, &se) && se.Status/100 == 2 {
			return fmt.Errorf("%w: POST /threads: answered HTTP %d with no thread", errLangGraphSetup, se.Status)
		}
		return fmt.Errorf("POST /threads: %w", err)
	}
	var body []byte
	ev, err := st.Next() // a JSON answer is one event
	if err == nil {
		body = ev.Data
	}
	defer st.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("POST /threads: %w", err)
	}
	var th langGraphThread
	if err := json.Unmarshal(body, &th); err != nil || th.ThreadID == "" {
		return fmt.Errorf("%w: POST /threads: the answer (%d bytes) has no thread_id", errLangGraphSetup, len(body))
	}
	if strings.ContainsAny(th.ThreadID, "/?#%") || resumeclient.InvalidHeaderByte(th.ThreadID) >= 0 {
		return fmt.Errorf("%w: POST /threads: the thread_id %s is not a path segment", errLangGraphSetup, bounded(t, th.ThreadID, MaxDetailID))
	}
	req.URL = base + "/threads/" + th.ThreadID + langGraphRuns
	return nil
}

// SetupName names the setup: the thread's creation.
func (langGraph) SetupName() string { return "POST /threads" }

// threadURL is the thread's URL, from the run's request; "" before
// OpenSession made one.
func threadURL(req resumeclient.Request) string {
	u := strings.TrimSuffix(req.URL, langGraphRuns)
	if i := strings.LastIndex(u, "/threads/"); i < 0 || strings.Contains(u[i+len("/threads/"):], "/") {
		return ""
	}
	return u
}

// CloseSession deletes the thread (its runs with it); the answer is not
// judged.
func (langGraph) CloseSession(ctx context.Context, c *resumeclient.Client, _ Target, req resumeclient.Request) {
	u := threadURL(req)
	if u == "" {
		return
	}
	h := req.Header.Clone()
	h.Del("Content-Type")
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), langGraphCloseWait)
	defer cancel()
	if st, err := c.Open(ctx, resumeclient.Request{Method: http.MethodDelete, URL: u, Header: h, Framing: resumeclient.FramingSSEOrJSON}); err == nil {
		st.Close()
	}
}

// langGraphCloseWait bounds the DELETE of the thread.
const langGraphCloseWait = 2 * time.Second

// CancelCall is not how a LangGraph run is cancelled (its id is needed):
// CancelStream is.
func (langGraph) CancelCall(context.Context, *resumeclient.Client, Target, resumeclient.Request) error {
	return errors.New("langgraph: no run id to cancel")
}

// CancelStream cancels the run by the API: POST
// /threads/{t}/runs/{r}/cancel (202 Accepted).
func (langGraph) CancelStream(ctx context.Context, c *resumeclient.Client, _ Target, req resumeclient.Request, runID string) error {
	u := threadURL(req)
	if u == "" || runID == "" {
		return errors.New("langgraph: no run id to cancel (the answer had no Content-Location)")
	}
	// Any 2xx is fine (202 Accepted), as for MCP's messages that expect no
	// answer.
	return mcpPost(ctx, c, resumeclient.Request{URL: u + "/runs/" + url.PathEscape(runID) + "/cancel", Header: req.Header}, []byte(`{}`))
}

// Resumer rejoins the run's stream with Last-Event-ID.
func (langGraph) Resumer() Resumer { return joinStream{} }

// joinStream rejoins a LangGraph run: GET /threads/{t}/runs/{r}/stream
// with Last-Event-ID; the cursor is the SSE last event ID.
type joinStream struct{ lastEventID }

// StreamID is the run id: the last segment of Content-Location
// (/threads/{t}/runs/{r}).
func (joinStream) StreamID(h http.Header) string {
	loc := h.Get("Content-Location")
	if loc == "" {
		return ""
	}
	if u, err := url.Parse(loc); err == nil {
		loc = u.Path
	}
	id := loc[strings.LastIndex(loc, "/")+1:]
	if id == "" || strings.ContainsAny(id, "?#%") || resumeclient.InvalidHeaderByte(id) >= 0 {
		return ""
	}
	return id
}

// StaleCursor is far ahead of any run's log (LangGraph's ids count it
// from 0).
func (joinStream) StaleCursor() string { return DefaultStaleCursor }

// Resume rejoins the run after cursor.
func (joinStream) Resume(orig resumeclient.Request, cursor, runID string) (resumeclient.Request, error) {
	u := threadURL(orig)
	if u == "" {
		return resumeclient.Request{}, errors.New("langgraph: no thread to rejoin")
	}
	if runID == "" {
		return resumeclient.Request{}, errors.New("langgraph: no run id seen before the drop (no Content-Location, no metadata event)")
	}
	h := orig.Header.Clone()
	h.Del("Content-Type")
	return resumeclient.Request{Method: http.MethodGet, URL: u + "/runs/" + url.PathEscape(runID) + "/stream", Header: h, LastEventID: cursor}, nil
}

// nonEmptyAny reads a field that may hold any JSON value: dst reports a
// non-empty string.
func nonEmptyAny(s *jscan, dst *bool) bool {
	if s.data[s.i] != '"' {
		return s.skip()
	}
	v, ok := s.str()
	*dst = ok && !v.empty()
	return ok
}

// objectOrSkip reads an object's members by field, or skips a value of
// any other type (a field that takes any JSON value).
func objectOrSkip(s *jscan, names []string, field func(k int) bool) bool {
	if s.data[s.i] != '{' {
		return s.skip()
	}
	return s.object("", "", names, field)
}
