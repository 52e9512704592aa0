package refserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LangGraphFault is a behaviour of the LangGraph server's rejoin, named by
// the assistant a run is made on ("agent" is correct).
type LangGraphFault string

// The LangGraph server's faults: each a resume bug one of the probe's
// verdicts names. A run made without stream_resumable is rejoined as the
// JS server does it then (LangGraphSharedQueue), whatever its assistant.
const (
	// LangGraphRestart rejoins from the run's first event, whatever
	// Last-Event-ID says.
	LangGraphRestart LangGraphFault = "restart"
	// LangGraphSkip rejoins one event after the one it should.
	LangGraphSkip LangGraphFault = "skip"
	// LangGraphRepeat rejoins from the event Last-Event-ID names, itself
	// included (off by one).
	LangGraphRepeat LangGraphFault = "repeat"
	// LangGraphNeverEnds keeps a rejoin open after the run ended: the
	// client never learns the end.
	LangGraphNeverEnds LangGraphFault = "never-ends"
	// LangGraphStaleLive answers a Last-Event-ID the run never had with
	// the live tail, as @langchain/langgraph-api does.
	LangGraphStaleLive LangGraphFault = "stale-live"
	// LangGraphSharedQueue is the JS server's rejoin of a run made
	// without stream_resumable: the dropped stream's reader still takes
	// events from the queue both share, so the rejoin gets every other
	// one.
	LangGraphSharedQueue LangGraphFault = "shared-queue"
)

// LangGraphFaults lists the faults, for the demo and the tests.
var LangGraphFaults = []LangGraphFault{LangGraphRestart, LangGraphSkip, LangGraphRepeat, LangGraphNeverEnds, LangGraphStaleLive, LangGraphSharedQueue}

// LangGraph is a LangGraph API server as an http.Handler (mounted under a
// prefix: every path below is the prefix's): POST /threads, POST
// /threads/{t}/runs/stream (Content-Location: /threads/{t}/runs/{r}; the
// run is produced on its schedule whoever reads it, and a drop never
// cancels it), GET /threads/{t}/runs/{r}/stream with Last-Event-ID (the
// events after it, then live; -1 from the first; an id the run never had
// is answered by an error event), POST /threads/{t}/runs/{r}/cancel,
// DELETE /threads/{t}. Events are written as the JS server writes them:
// event, pretty-printed data over several lines, then the id (the run's
// log index, from 0); the end of the body ends the run's stream. The
// assistant a run names picks its fault ("agent": none).
type LangGraph struct {
	// Steps, when set, is every run's schedule (metadata and values
	// events, message chunks); nil plays LangGraphRun of the sample whose
	// prompt the run's input holds.
	Steps func(body []byte) []Step

	mu      sync.Mutex
	threads map[string]map[string]*lgRun
	n       int
	log     []LangGraphRequest
	quit    chan struct{}
}

// LangGraphRequest is one request the server answered.
type LangGraphRequest struct {
	Method, Path, LastEventID string
	Status                    int
	At                        time.Time
}

// lgRun is a run: its log, produced on its schedule.
type lgRun struct {
	id    string
	fault LangGraphFault
	log   *liveLog
}

// NewLangGraph returns the server.
func NewLangGraph() *LangGraph {
	return &LangGraph{threads: map[string]map[string]*lgRun{}, quit: make(chan struct{})}
}

// Close stops the runs in flight.
func (g *LangGraph) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.quit:
	default:
		close(g.quit)
	}
	return nil
}

// Requests returns the requests so far.
func (g *LangGraph) Requests() []LangGraphRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]LangGraphRequest(nil), g.log...)
}

// Threads is how many threads exist now.
func (g *LangGraph) Threads() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.threads)
}

func (g *LangGraph) logRequest(r *http.Request, path string, status int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.log) < 1000 {
		g.log = append(g.log, LangGraphRequest{Method: r.Method, Path: path, LastEventID: r.Header.Get("Last-Event-ID"), Status: status, At: time.Now()})
	}
}

// ServeHTTP answers the API below the prefix it is mounted on (the path
// from /threads on).
func (g *LangGraph) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if i := strings.Index(path, "/threads"); i >= 0 {
		path = path[i:]
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	status := http.StatusNotFound
	defer func() { g.logRequest(r, path, status) }()
	switch {
	case r.Method == http.MethodPost && path == "/threads":
		status = g.newThread(w)
	case r.Method == http.MethodDelete && len(parts) == 2 && parts[0] == "threads":
		status = g.deleteThread(w, parts[1])
	case r.Method == http.MethodPost && len(parts) == 4 && parts[2] == "runs" && parts[3] == "stream":
		status = g.newRun(w, r, parts[1])
	case r.Method == http.MethodGet && len(parts) == 5 && parts[2] == "runs" && parts[4] == "stream":
		status = g.rejoin(w, r, parts[1], parts[3])
	case r.Method == http.MethodPost && len(parts) == 5 && parts[2] == "runs" && parts[4] == "cancel":
		status = g.cancel(w, parts[1], parts[3])
	default:
		http.Error(w, `{"detail":"Not Found"}`, status)
	}
}

func (g *LangGraph) newThread(w http.ResponseWriter) int {
	g.mu.Lock()
	g.n++
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", g.n)
	g.threads[id] = map[string]*lgRun{}
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, `{"thread_id":%q,"status":"idle","metadata":{}}`, id)
	return http.StatusOK
}

func (g *LangGraph) deleteThread(w http.ResponseWriter, thread string) int {
	g.mu.Lock()
	runs, ok := g.threads[thread]
	delete(g.threads, thread)
	g.mu.Unlock()
	if !ok {
		http.Error(w, `{"detail":"Thread not found"}`, http.StatusNotFound)
		return http.StatusNotFound
	}
	for _, run := range runs {
		run.log.stop()
	}
	w.WriteHeader(http.StatusNoContent)
	return http.StatusNoContent
}

// lgRunBody is what the server reads of a run's request.
type lgRunBody struct {
	AssistantID     string `json:"assistant_id"`
	StreamResumable bool   `json:"stream_resumable"`
}

func (g *LangGraph) newRun(w http.ResponseWriter, r *http.Request, thread string) int {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var b lgRunBody
	if err := json.Unmarshal(body, &b); err != nil || b.AssistantID == "" {
		http.Error(w, `{"detail":"assistant_id is required"}`, http.StatusUnprocessableEntity)
		return http.StatusUnprocessableEntity
	}
	fault := LangGraphFault(b.AssistantID)
	if fault == "agent" {
		fault = ""
	} else if !containsFault(fault) {
		http.Error(w, `{"detail":"Assistant not found"}`, http.StatusNotFound)
		return http.StatusNotFound
	}
	if !b.StreamResumable {
		fault = LangGraphSharedQueue
	}
	g.mu.Lock()
	runs, ok := g.threads[thread]
	g.n++
	id := fmt.Sprintf("10000000-0000-4000-8000-%012d", g.n)
	var run *lgRun
	if ok {
		sample := "short"
		if strings.Contains(string(body), "TCP") {
			sample = "long" // the long sample's prompt
		}
		steps := LangGraphRun(sample, id)
		if g.Steps != nil {
			steps = g.Steps(body)
		}
		run = &lgRun{id: id, fault: fault, log: newLiveLog()}
		runs[id] = run
		go run.log.play(stretched(r.Context(), lgSteps(steps, id)), g.quit)
	}
	g.mu.Unlock()
	if !ok {
		http.Error(w, `{"detail":"Thread not found"}`, http.StatusNotFound)
		return http.StatusNotFound
	}
	w.Header().Set("Content-Location", "/threads/"+thread+"/runs/"+id)
	g.stream(w, r, run, 0, false)
	return http.StatusOK
}

func containsFault(f LangGraphFault) bool {
	for _, k := range LangGraphFaults {
		if k == f {
			return true
		}
	}
	return false
}

// lgSteps fills the run id into the schedule's metadata event.
func lgSteps(steps []Step, runID string) []Step {
	out := append([]Step(nil), steps...)
	for i := range out {
		out[i].Data = strings.ReplaceAll(out[i].Data, "{run_id}", runID)
	}
	return out
}

func (g *LangGraph) run(thread, id string) *lgRun {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.threads[thread][id]
}

// rejoin answers GET /threads/{t}/runs/{r}/stream: the events after
// Last-Event-ID (as the run's fault has it), then live.
func (g *LangGraph) rejoin(w http.ResponseWriter, r *http.Request, thread, id string) int {
	run := g.run(thread, id)
	if run == nil {
		// As the JS server: 200, and an error event.
		writeSSEHead(w)
		io.WriteString(w, "event: error\ndata: \"Run not found\"\n\n")
		return http.StatusOK
	}
	from := 0
	last := r.Header.Get("Last-Event-ID")
	n, err := strconv.Atoi(last)
	switch {
	case last == "":
		from = run.log.len() // from now on
	case err != nil || n < -1 || n >= run.log.len():
		// An id the run never had (yet).
		if run.fault != LangGraphStaleLive {
			writeSSEHead(w)
			fmt.Fprintf(w, "event: error\ndata: {\ndata:   \"error\": \"StaleLastEventID\",\ndata:   \"message\": \"Last-Event-ID is not in the run's log\"\ndata: }\n\n")
			return http.StatusOK
		}
		from = run.log.len()
	default:
		from = n + 1
		switch run.fault {
		case LangGraphRestart:
			from = 0
		case LangGraphSkip, LangGraphSharedQueue:
			from = n + 2
		case LangGraphRepeat:
			from = max(n, 0)
		}
	}
	g.stream(w, r, run, from, true)
	return http.StatusOK
}

// stream writes the run's events from position from on, as they come,
// until the run's end (rejoin: a rejoin of a faulty run, which skips every
// other event, or never ends).
func (g *LangGraph) stream(w http.ResponseWriter, r *http.Request, run *lgRun, from int, rejoin bool) {
	writeSSEHead(w)
	rc := http.NewResponseController(w)
	for i := from; ; i++ {
		st, ok := run.log.wait(r.Context(), g.quit, i)
		if !ok {
			break
		}
		if rejoin && run.fault == LangGraphSharedQueue && (i-from)%2 == 1 {
			continue
		}
		if _, err := io.WriteString(w, lgEncode(st, i)); err != nil {
			return
		}
		rc.Flush()
	}
	if rejoin && run.fault == LangGraphNeverEnds {
		select {
		case <-r.Context().Done():
		case <-g.quit:
		}
	}
}

// lgEncode writes an event as the JS server does: the event, the data
// pretty-printed over several data lines, then the id.
func lgEncode(st Step, id int) string {
	var b strings.Builder
	b.WriteString("event: " + st.Event + "\n")
	for _, line := range strings.Split(prettyJSON(st.Data), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("id: " + strconv.Itoa(id) + "\n\n")
	return b.String()
}

// prettyJSON indents JSON data by two spaces, as JSON.stringify(v, null,
// 2) does; data that is not JSON is kept.
func prettyJSON(data string) string {
	var v any
	if json.Unmarshal([]byte(data), &v) != nil {
		return data
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return data
	}
	return string(out)
}

func (g *LangGraph) cancel(w http.ResponseWriter, thread, id string) int {
	run := g.run(thread, id)
	if run == nil {
		http.Error(w, `{"detail":"Run not found"}`, http.StatusNotFound)
		return http.StatusNotFound
	}
	run.log.stop()
	w.WriteHeader(http.StatusAccepted)
	return http.StatusAccepted
}

func writeSSEHead(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
}

// LangGraphRun is a run's schedule for a sample: its metadata (the run
// id filled in), the input state, then the answer's message chunks in
// messages-tuple form (short: the worked example's times; long: 24 chunks
// 40 ms apart from 400 ms), then the final state.
func LangGraphRun(sample, runID string) []Step {
	ms := Ms(412, 452, 497, 541, 588, 634, 691, 950, 998, 1044)
	if sample != "short" {
		ms = ms[:0]
		for i := range 24 {
			ms = append(ms, time.Duration(400+40*i)*time.Millisecond)
		}
	}
	meta := `{"langgraph_node":"agent","langgraph_step":1,"run_id":"{run_id}"}`
	steps := []Step{
		{At: 50 * time.Millisecond, Event: "metadata", Data: `{"run_id":"{run_id}","attempt":1}`},
		{At: 60 * time.Millisecond, Event: "values", Data: `{"messages":[{"type":"human","content":"(the sample's prompt)"}]}`},
	}
	for i, at := range ms {
		steps = append(steps, Step{At: at, Event: "messages", Data: fmt.Sprintf(`[{"content":"w%d","type":"AIMessageChunk","id":"run-{run_id}","tool_call_chunks":[]},%s]`, i, meta)})
	}
	end := ms[len(ms)-1] + 10*time.Millisecond
	steps = append(steps, Step{At: end, Event: "values", Data: `{"messages":[{"type":"human","content":"(the sample's prompt)"},{"type":"ai","content":"(the answer)"}]}`})
	if runID != "" {
		steps = lgSteps(steps, runID)
	}
	return steps
}

// liveLog is an answer produced on its schedule whoever reads it: readers
// wait for the event at a position, and learn the end.
type liveLog struct {
	mu     sync.Mutex
	events []Step
	done   bool
	wake   chan struct{} // closed at each change
	halt   chan struct{}
	once   sync.Once
}

func newLiveLog() *liveLog {
	return &liveLog{wake: make(chan struct{}), halt: make(chan struct{})}
}

// play appends the steps at their times from now, then ends the log.
func (l *liveLog) play(steps []Step, quit <-chan struct{}) {
	start := time.Now()
	defer l.end()
	for _, st := range steps {
		t := time.NewTimer(time.Until(start.Add(st.At)))
		select {
		case <-t.C:
		case <-quit:
			t.Stop()
			return
		case <-l.halt:
			t.Stop()
			return
		}
		l.mu.Lock()
		l.events = append(l.events, st)
		close(l.wake)
		l.wake = make(chan struct{})
		l.mu.Unlock()
	}
}

func (l *liveLog) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.done = true
		close(l.wake)
		l.wake = make(chan struct{})
	}
}

// stop ends the log early (a cancel).
func (l *liveLog) stop() { l.once.Do(func() { close(l.halt) }) }

func (l *liveLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

func (l *liveLog) isDone() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done
}

// wait returns the event at position i once it is there; false when the
// log ended before it, or ctx or quit did.
func (l *liveLog) wait(ctx context.Context, quit <-chan struct{}, i int) (Step, bool) {
	for {
		l.mu.Lock()
		if i < len(l.events) {
			st := l.events[i]
			l.mu.Unlock()
			return st, true
		}
		if l.done {
			l.mu.Unlock()
			return Step{}, false
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return Step{}, false
		case <-quit:
			return Step{}, false
		}
	}
}
