package refserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AISDK builds the steps of an AI SDK UI message stream (what
// streamText(...).toUIMessageStreamResponse() serves): SSE data lines,
// each a JSON part with a type, then data: [DONE].
type AISDK struct{ steps []Step }

// Part adds a part of type typ with the other fields.
func (a *AISDK) Part(at time.Duration, typ string, fields map[string]any) *AISDK {
	m := map[string]any{"type": typ}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	a.steps = append(a.steps, Step{At: at, Data: string(b)})
	return a
}

// Text adds a text-delta.
func (a *AISDK) Text(at time.Duration, delta string) *AISDK {
	return a.Part(at, "text-delta", map[string]any{"id": "t1", "delta": delta})
}

// Reasoning adds a reasoning-delta.
func (a *AISDK) Reasoning(at time.Duration, delta string) *AISDK {
	return a.Part(at, "reasoning-delta", map[string]any{"id": "r1", "delta": delta})
}

// Error adds an error part.
func (a *AISDK) Error(at time.Duration, text string) *AISDK {
	return a.Part(at, "error", map[string]any{"errorText": text})
}

// Finish adds the finish part with its finishReason (stop, length,
// content-filter, tool-calls, error, other).
func (a *AISDK) Finish(at time.Duration, reason string) *AISDK {
	return a.Part(at, "finish", map[string]any{"finishReason": reason})
}

// Done adds data: [DONE].
func (a *AISDK) Done(at time.Duration) *AISDK {
	a.steps = append(a.steps, Step{At: at, Data: "[DONE]"})
	return a
}

// Steps returns the schedule.
func (a *AISDK) Steps() []Step { return append([]Step(nil), a.steps...) }

// ResumableFault is a behaviour of the resumable AI SDK app's resume,
// named by the path the app is mounted at (/resumable/{fault}/api/chat;
// "correct" for none).
type ResumableFault string

// The resumable app's faults: each a resume bug one of the probe's
// verdicts names.
const (
	// ResumableRestart generates the answer again on a resume (a new
	// message id, other text) instead of replaying it.
	ResumableRestart ResumableFault = "restart"
	// ResumableSkip leaves a part out of the replay.
	ResumableSkip ResumableFault = "skip"
	// ResumableRepeat sends a part of the replay twice.
	ResumableRepeat ResumableFault = "repeat"
	// ResumableNeverEnds replays and follows the answer, then never ends
	// the resume (no [DONE], the connection held).
	ResumableNeverEnds ResumableFault = "never-ends"
	// ResumableNoContentLive answers 204 (no active stream) while the
	// answer is still streaming, as the AI SDK's route does in its first
	// milliseconds.
	ResumableNoContentLive ResumableFault = "no-content-live"
	// ResumableEmpty answers a resume of a finished answer 200 with an
	// empty event stream instead of 204, as a route whose chat still names
	// a finished stream does.
	ResumableEmpty ResumableFault = "empty-200"
)

// ResumableFaults lists the faults, for the demo and the tests.
var ResumableFaults = []ResumableFault{ResumableRestart, ResumableSkip, ResumableRepeat, ResumableNeverEnds, ResumableNoContentLive, ResumableEmpty}

// Resumable is an AI SDK app with resumable streams (the AI SDK's "chatbot
// resume streams" pattern over resumable-stream) as an http.Handler
// mounted under a prefix: POST {prefix}/{fault}/api/chat answers the
// chat's UI message stream and records it as the chat's active stream;
// GET {prefix}/{fault}/api/chat/{id}/stream replays the active stream from
// its start part, then follows it live to [DONE]; 204 when the chat has no
// active stream (never had one, or it finished).
type Resumable struct {
	// Steps is the answer's schedule (nil: the AISDK("") worked example).
	Steps []Step

	mu    sync.Mutex
	chats map[string]*liveLog
	log   []ResumableRequest
	quit  chan struct{}
}

// ResumableRequest is one request the app answered.
type ResumableRequest struct {
	Method, Path string
	Status       int
	At           time.Time
}

// NewResumable returns the app.
func NewResumable() *Resumable {
	return &Resumable{chats: map[string]*liveLog{}, quit: make(chan struct{})}
}

// Close ends the answers in flight.
func (a *Resumable) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-a.quit:
	default:
		close(a.quit)
	}
	return nil
}

// Requests returns the requests so far.
func (a *Resumable) Requests() []ResumableRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ResumableRequest(nil), a.log...)
}

func (a *Resumable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// {prefix}/{fault}/api/chat[/{id}/stream]
	i := strings.Index(r.URL.Path, "/api/chat")
	status := http.StatusNotFound
	defer func() {
		a.mu.Lock()
		if len(a.log) < 1000 {
			a.log = append(a.log, ResumableRequest{Method: r.Method, Path: r.URL.Path, Status: status, At: time.Now()})
		}
		a.mu.Unlock()
	}()
	if i < 0 {
		http.NotFound(w, r)
		return
	}
	prefix := strings.TrimSuffix(r.URL.Path[:i], "/")
	fault := ResumableFault(prefix[strings.LastIndex(prefix, "/")+1:])
	rest := r.URL.Path[i+len("/api/chat"):]
	switch {
	case r.Method == http.MethodPost && rest == "":
		status = a.post(w, r, fault)
	case r.Method == http.MethodGet && strings.HasSuffix(rest, "/stream") && strings.Count(rest, "/") == 2:
		status = a.resume(w, r, fault, strings.Split(rest, "/")[1])
	default:
		http.NotFound(w, r)
	}
}

// post answers the chat request and records its answer as the chat's
// active stream.
func (a *Resumable) post(w http.ResponseWriter, r *http.Request, fault ResumableFault) int {
	var b struct {
		ID string `json:"id"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if json.Unmarshal(body, &b) != nil || b.ID == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return http.StatusBadRequest
	}
	steps := a.Steps
	if steps == nil {
		steps = AISDKWorkedExample()
	}
	l := newLiveLog()
	go l.play(stretched(r.Context(), steps), a.quit)
	a.mu.Lock()
	if len(a.chats) >= 256 {
		clear(a.chats)
	}
	a.chats[b.ID] = l
	a.mu.Unlock()
	a.play(w, r, l, 0, fault, false)
	return http.StatusOK
}

// resume answers the resume GET: the active stream's replay, as the
// fault has it.
func (a *Resumable) resume(w http.ResponseWriter, r *http.Request, fault ResumableFault, chat string) int {
	a.mu.Lock()
	l := a.chats[chat]
	a.mu.Unlock()
	switch {
	case l == nil, l.isDone() && fault != ResumableEmpty, fault == ResumableNoContentLive:
		w.WriteHeader(http.StatusNoContent)
		return http.StatusNoContent
	case l.isDone():
		writeSSEHead(w)
		return http.StatusOK
	}
	if fault == ResumableRestart {
		l = newLiveLog()
		go l.play(stretched(r.Context(), regenerated(a.Steps)), a.quit)
	}
	a.play(w, r, l, 0, fault, true)
	return http.StatusOK
}

// regenerated is the answer generated again: another message id, other
// text.
func regenerated(steps []Step) []Step {
	if steps == nil {
		steps = AISDKWorkedExample()
	}
	out := append([]Step(nil), steps...)
	for i := range out {
		out[i].Data = strings.NewReplacer(`"refserver-1"`, `"refserver-2"`, `"delta":"w`, `"delta":"x`).Replace(out[i].Data)
	}
	return out
}

// play writes the answer from position from on as data lines, as it
// comes; a resume plays the fault's replay.
func (a *Resumable) play(w http.ResponseWriter, r *http.Request, l *liveLog, from int, fault ResumableFault, resume bool) {
	writeSSEHead(w)
	rc := http.NewResponseController(w)
	for i := from; ; i++ {
		st, ok := l.wait(r.Context(), a.quit, i)
		if !ok {
			break
		}
		switch {
		case !resume:
		case fault == ResumableSkip && i == 7:
			continue
		case fault == ResumableNeverEnds && st.Data == "[DONE]":
			select {
			case <-r.Context().Done():
			case <-a.quit:
			}
			return
		}
		n := 1
		if resume && fault == ResumableRepeat && i == 7 {
			n = 2
		}
		for range n {
			if _, err := io.WriteString(w, "data: "+st.Data+"\n\n"); err != nil {
				return
			}
		}
		rc.Flush()
	}
}

// AISDKWorkedExample is the scorecard article's worked example as an AI
// SDK UI message stream: start, a reasoning part, the text deltas,
// finish, [DONE] (what the built-in target's AI SDK route plays).
func AISDKWorkedExample() []Step {
	a := &AISDK{}
	a.Part(340*time.Millisecond, "start", map[string]any{"messageId": "refserver-1"}).Part(341*time.Millisecond, "start-step", nil).
		Part(350*time.Millisecond, "reasoning-start", map[string]any{"id": "r1"}).Reasoning(360*time.Millisecond, "Recalling the capital.").
		Part(370*time.Millisecond, "reasoning-end", map[string]any{"id": "r1"}).Part(380*time.Millisecond, "text-start", map[string]any{"id": "t1"})
	for i, at := range Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044) {
		a.Text(at, "w"+strconv.Itoa(i))
	}
	return a.Part(1046*time.Millisecond, "text-end", map[string]any{"id": "t1"}).Part(1047*time.Millisecond, "finish-step", nil).
		Part(1048*time.Millisecond, "finish", map[string]any{"finishReason": "stop"}).Done(1051 * time.Millisecond).Steps()
}
