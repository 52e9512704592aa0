package langgraphpeer_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/langgraphpeer"
)

// What the LangGraph JS API server does on a rejoin, pinned on the running
// server with the source lines that do it, so that a bump of
// @langchain/langgraph-api that changes any of it fails here, naming the
// line to read again. The langgraph dialect's verdicts on this peer rest on
// these facts; docs/dialects.md says them in prose.
//
// Files under node_modules/@langchain/langgraph-api/dist/ (2.0.0,
// package-lock.json).
const (
	runsAPI = "api/runs.mjs"
	ops     = "storage/ops.mjs"
)

// client is the tests' own reader of the API: no keep-alive, so closing
// a body mid-stream drops the connection, as a lost client does.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}

type event struct{ name, id, data string }

// read reads events from an SSE body until n came (n < 0: to the end).
func read(t *testing.T, resp *http.Response, n int) []event {
	t.Helper()
	var out []event
	var cur event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		switch {
		case line == "":
			if cur != (event{}) {
				out = append(out, cur)
				cur = event{}
				if n >= 0 && len(out) >= n {
					return out
				}
			}
		case k == "event":
			cur.name = v
		case k == "id":
			cur.id = v
		case k == "data":
			if cur.data != "" {
				cur.data += "\n"
			}
			cur.data += v
		}
	}
	return out
}

// run makes a thread and starts a run of the long answer on it; it returns
// the stream's response, the thread and the run id.
func run(t *testing.T, p *langgraphpeer.Peer, resumable bool) (*http.Response, string, string) {
	t.Helper()
	resp, err := client.Post(p.URL+"/threads", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	json.NewDecoder(resp.Body).Decode(&th)
	resp.Body.Close()
	body := `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"explain TCP"}]},"stream_mode":["messages-tuple","values"],"stream_resumable":` + strconv.FormatBool(resumable) + `}`
	resp, err = client.Post(p.URL+"/threads/"+th.ThreadID+"/runs/stream", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	loc := resp.Header.Get("Content-Location")
	want := "/threads/" + th.ThreadID + "/runs/"
	if !strings.HasPrefix(loc, want) {
		t.Fatalf("Content-Location %q, want %s{run} (%s:248)", loc, want, runsAPI)
	}
	if l := resp.Header.Get("Location"); l != "" {
		t.Errorf("Location %q: the server sends none (%s:248), so the JS SDK's reconnect (which follows Location) never fires", l, runsAPI)
	}
	return resp, th.ThreadID, loc[len(want):]
}

func rejoin(t *testing.T, p *langgraphpeer.Peer, thread, runID, last string) []event {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.URL+"/threads/"+thread+"/runs/"+runID+"/stream", nil)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("rejoin: HTTP %d", resp.StatusCode)
	}
	return read(t, resp, -1)
}

func ids(t *testing.T, evs []event) []int {
	t.Helper()
	var out []int
	for _, e := range evs {
		n, err := strconv.Atoi(e.id)
		if err != nil {
			t.Fatalf("event %q has id %q, not the log index (%s:67-68)", e.name, e.id, ops)
		}
		out = append(out, n)
	}
	return out
}

// The stream: metadata first, ids from 0 that count the run's log (the
// Queue's index, ops.mjs:50-54), written after the data (runs.mjs:258),
// the data pretty-printed over several data lines, message chunks as
// [chunk, metadata] with the text in content; no end event: the body
// ends when the run's control "done" comes (ops.mjs:1229).
func TestStreamShape(t *testing.T) {
	p := langgraphpeer.Start(t)
	resp, _, _ := run(t, p, true)
	evs := read(t, resp, -1)
	resp.Body.Close()
	if len(evs) == 0 || evs[0].name != "metadata" {
		t.Fatalf("events %v: want metadata first", evs)
	}
	for i, n := range ids(t, evs) {
		if n != i {
			t.Fatalf("event %d has id %d: ids count the run's log from 0 (%s:50-54)", i, n, ops)
		}
	}
	text := ""
	for _, e := range evs {
		if e.name == "end" {
			t.Errorf("an end event: the server sends none (%s:1229 breaks the join, the body ends)", ops)
		}
		if e.name == "messages" {
			var tuple []struct {
				Content string `json:"content"`
			}
			if err := json.Unmarshal([]byte(e.data), &tuple); err != nil || len(tuple) != 2 {
				t.Fatalf("messages data %q: want [chunk, metadata] (%v)", e.data, err)
			}
			text += tuple[0].Content
		}
	}
	if !strings.Contains(evs[0].data, "\n") {
		t.Errorf("metadata data %q: want it pretty-printed over several data lines", evs[0].data)
	}
	if text != langgraphpeer.LongAnswer {
		t.Errorf("the message chunks say %q, want %q", text, langgraphpeer.LongAnswer)
	}
}

// With stream_resumable, the POST's reader reads the log from -1
// (runs.mjs:256) and a rejoin with Last-Event-ID N gets log[N+1], then
// each next one (ops.mjs:57-68): exactly the events after N, once, in
// order, then live; and the same from memory once the run ended.
func TestRejoinResumable(t *testing.T) {
	p := langgraphpeer.Start(t)
	for _, wait := range []time.Duration{0, 3 * time.Second} {
		resp, thread, runID := run(t, p, true)
		first := read(t, resp, 6)
		resp.Body.Close() // the drop
		time.Sleep(wait)  // 3 s: the run has ended
		last := first[len(first)-1].id
		got := ids(t, rejoin(t, p, thread, runID, last))
		n, _ := strconv.Atoi(last)
		for i, id := range got {
			if id != n+1+i {
				t.Fatalf("after %s: rejoin from %s gave ids %v: want %d, %d, ... once, in order (%s:57-68)", wait, last, got, n+1, n+2, ops)
			}
		}
		if len(got) < 10 {
			t.Errorf("after %s: rejoin gave %d events, want the rest of the run", wait, len(got))
		}
	}
}

// Without stream_resumable the queue is not resumable (ops.mjs:1203, the
// POST joins with no lastEventId: runs.mjs:256): every reader shifts
// events off one shared queue (ops.mjs:70-76), and the dropped POST's
// reader goes on reading (its loop, runs.mjs:254-259, ends only with the
// run: on_disconnect is "continue"). So a rejoin loses events: the ids it
// gets skip.
func TestRejoinNotResumableLosesEvents(t *testing.T) {
	p := langgraphpeer.Start(t)
	resp, thread, runID := run(t, p, false)
	first := read(t, resp, 6)
	resp.Body.Close()
	last := first[len(first)-1].id
	got := ids(t, rejoin(t, p, thread, runID, last))
	n, _ := strconv.Atoi(last)
	lost := 0
	prev := n
	for _, id := range got {
		if id <= prev {
			t.Fatalf("rejoin ids %v: not increasing", got)
		}
		lost += id - prev - 1
		prev = id
	}
	t.Logf("rejoin from %s got ids %v: %d lost", last, got, lost)
	if lost == 0 {
		t.Errorf("rejoin without stream_resumable from %s got %v, every event: the shared queue (%s:70-76) lost none", last, got, ops)
	}
}

// An id the run never had: a future one (999999999) or one that is not a
// number is no target (ops.mjs:60-66), so the rejoin waits for the next
// event pushed: the live tail, with no error. An unknown run: 200 and an
// error event "Run not found" (ops.mjs:1243). A rejoin from the run's last
// id after it ended: the join times out, sees the run is over, and ends
// with no event (ops.mjs:1246): an empty 200.
func TestRejoinStaleAndEnded(t *testing.T) {
	p := langgraphpeer.Start(t)
	for _, stale := range []string{"999999999", "streamprobe-stale-id-0"} {
		resp, thread, runID := run(t, p, true)
		first := read(t, resp, 6)
		resp.Body.Close()
		n, _ := strconv.Atoi(first[len(first)-1].id)
		got := ids(t, rejoin(t, p, thread, runID, stale))
		if len(got) == 0 || got[0] <= n {
			t.Errorf("rejoin from %s after id %d gave %v: want the live tail, past %d (%s:60-66)", stale, n, got, n, ops)
		}
	}
	resp, thread, runID := run(t, p, true)
	all := read(t, resp, -1)
	resp.Body.Close()
	if got := rejoin(t, p, thread, runID, all[len(all)-1].id); len(got) != 0 {
		t.Errorf("rejoin from the last id after the run ended gave %v, want an empty 200 (%s:1246)", got, ops)
	}
	evs := rejoin(t, p, thread, "00000000-0000-4000-8000-000000000000", "3")
	if len(evs) != 1 || evs[0].name != "error" || !strings.Contains(evs[0].data, "Run not found") {
		t.Errorf("rejoin of an unknown run: %v, want one error event \"Run not found\" (%s:1243)", evs, ops)
	}
}
