package resumablepeer_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/resumablepeer"
)

// What the AI SDK's resumable streams do on a resume, pinned on a running
// route with the source lines that do it, so that a bump of ai or
// resumable-stream that changes any of it fails here, naming the line to
// read again. The ai-sdk-ui dialect's verdicts on this peer rest on these
// facts; docs/drills.md says them in prose.
//
// Files: node_modules/ai/dist/index.js (7.0.173) and
// node_modules/resumable-stream/dist/runtime.js (2.2.13), package-lock.json.
const (
	aiIndex = "ai/dist/index.js"
	runtime = "resumable-stream/dist/runtime.js"
)

var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}

// dataLines reads the data of an SSE body's events until n came (n < 0:
// to the end).
func dataLines(resp *http.Response, n int) []string {
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
			if n >= 0 && len(out) >= n {
				break
			}
		}
	}
	return out
}

func post(t *testing.T, p *resumablepeer.Peer, chat string) *http.Response {
	t.Helper()
	body := `{"id":"` + chat + `","trigger":"submit-message","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"explain TCP"}]}]}`
	resp, err := client.Post(p.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST: HTTP %d", resp.StatusCode)
	}
	return resp
}

func resume(t *testing.T, p *resumablepeer.Peer, chat string) (*http.Response, []string) {
	t.Helper()
	resp, err := client.Get(p.URL + "/" + chat + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp, dataLines(resp, -1)
}

func deltas(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, `"type":"text-delta"`) {
			n++
		}
	}
	return n
}

func saved(chat string) func([]resumablepeer.Exchange) bool {
	return func(log []resumablepeer.Exchange) bool {
		e, ok := resumablepeer.Post(log, chat)
		return ok && e.SavedAt > 0
	}
}

// Once the route saved the stream's id, a resume gets the whole answer
// again from its start part (the producer sends every chunk so far to a
// new listener: runtime.js:87), byte for byte as the POST sent it, then
// the rest live, then [DONE].
func TestResumeReplaysFromStart(t *testing.T) {
	store := resumablepeer.NewStore(t)
	p := resumablepeer.Start(t, store)
	resp := post(t, p, "replay")
	first := dataLines(resp, 6)
	resp.Body.Close() // the drop
	p.Wait(t, "the stream id saved", saved("replay"))
	r, got := resume(t, p, "replay")
	if r.StatusCode != http.StatusOK || len(got) < len(first) {
		t.Fatalf("resume: HTTP %d, %d events", r.StatusCode, len(got))
	}
	for i := range first {
		if got[i] != first[i] {
			t.Errorf("replayed event %d %q, the POST sent %q: a replay from the start is the same bytes (%s:87)", i, got[i], first[i], runtime)
		}
	}
	if !strings.Contains(got[0], `"type":"start"`) || got[len(got)-1] != "[DONE]" || deltas(got) != resumablepeer.LongDeltas {
		t.Errorf("resume: %d events from %q to %q, %d text deltas: want the start part, every delta, [DONE]", len(got), got[0], got[len(got)-1], deltas(got))
	}
}

// The route answers before it saved the stream's id: consumeSseStream is
// called and not awaited (ai/dist/index.js:6550-6553), and
// createNewResumableStream's Redis writes come before the save. A resume
// in that window finds no active stream: 204 while the answer is still
// streaming (the POST goes on to the end). The window is held open here by
// pausing the streams' Redis writes (CLIENT PAUSE WRITE), as a slow Redis
// does; in the field it is the first milliseconds of every answer.
func TestNoContentWhileStreaming(t *testing.T) {
	store := resumablepeer.NewStore(t)
	p := resumablepeer.Start(t, store)
	if _, err := store.Streams.Do("CLIENT", "PAUSE", "5000", "WRITE"); err != nil {
		t.Fatal(err)
	}
	resp := post(t, p, "race")
	defer resp.Body.Close()
	first := dataLines(resp, 4)
	r, got := resume(t, p, "race")
	store.Streams.Do("CLIENT", "UNPAUSE")
	rest := dataLines(resp, -1)
	log := p.Wait(t, "the stream id saved", saved("race"))
	if r.StatusCode != http.StatusNoContent || len(got) != 0 {
		t.Errorf("resume while the id was not saved: HTTP %d, %d events; want 204 (%s:6550-6553)", r.StatusCode, len(got), aiIndex)
	}
	if all := append(first, rest...); all[len(all)-1] != "[DONE]" || deltas(all) != resumablepeer.LongDeltas {
		t.Errorf("the POST: %d events, %d deltas: the answer went on while the resume said no stream was active", len(all), deltas(all))
	}
	var get resumablepeer.Exchange
	for _, e := range log {
		if e.Method == http.MethodGet {
			get = e
		}
	}
	if get.Active {
		t.Errorf("the GET found an active stream: %+v", get)
	}
}

// After the answer ended, onFinish cleared the chat's active stream: a
// resume is 204, right. A chat that still names a finished stream (an
// instance that died before onFinish) gets an empty 200: the stream's
// sentinel says DONE and resumeExistingStream returns null
// (runtime.js:65-66), which the route answers as a body-less 200 with the
// UI message stream's headers. An unknown chat is the route's 500 (the
// template's readChat throws).
func TestResumeAfterTheEnd(t *testing.T) {
	store := resumablepeer.NewStore(t)
	p := resumablepeer.Start(t, store)
	resp := post(t, p, "done")
	all := dataLines(resp, -1)
	resp.Body.Close()
	log := p.Wait(t, "the stream id cleared", func(log []resumablepeer.Exchange) bool {
		e, ok := resumablepeer.Post(log, "done")
		return ok && e.ClearedAt > 0 && e.SavedAt > 0
	})
	if all[len(all)-1] != "[DONE]" {
		t.Fatalf("the POST ended with %q", all[len(all)-1])
	}
	if r, got := resume(t, p, "done"); r.StatusCode != http.StatusNoContent || len(got) != 0 {
		t.Errorf("resume after the end: HTTP %d, %d events; want 204", r.StatusCode, len(got))
	}
	e, _ := resumablepeer.Post(log, "done")
	chat, _ := json.Marshal(map[string]string{"activeStreamId": e.StreamID})
	if _, err := store.Chats.Do("SET", "chat:done", string(chat)); err != nil {
		t.Fatal(err)
	}
	if r, got := resume(t, p, "done"); r.StatusCode != http.StatusOK || len(got) != 0 || r.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("resume of a finished stream still named: HTTP %d %q, %d events; want an empty 200 (%s:65-66)", r.StatusCode, r.Header.Get("Content-Type"), len(got), runtime)
	}
	if r, _ := resume(t, p, "never-posted"); r.StatusCode != http.StatusInternalServerError {
		t.Errorf("resume of an unknown chat: HTTP %d, want 500", r.StatusCode)
	}
}

// The replay lives in the memory of the instance that produces the
// answer (its chunks array, runtime.js:72; a new listener asks it over
// Redis pub/sub, :87): when that instance is gone, another one finds the
// stream named and active and asks for it, nobody answers, and after the
// 1 s ack timeout the resume fails (runtime.js:253-262): the route's 500,
// for as long as the Redis key lives (24 h, :98).
func TestResumeAfterTheProducerDied(t *testing.T) {
	store := resumablepeer.NewStore(t)
	a, b := resumablepeer.Start(t, store), resumablepeer.Start(t, store)
	resp := post(t, a, "orphan")
	dataLines(resp, 6)
	resp.Body.Close()
	a.Wait(t, "the stream id saved", saved("orphan"))
	a.Stop()
	r, _ := resume(t, b, "orphan")
	log := b.Wait(t, "the GET", func(log []resumablepeer.Exchange) bool { return len(log) > 0 && log[len(log)-1].EndAt > 0 })
	if r.StatusCode != http.StatusInternalServerError || !strings.Contains(log[len(log)-1].Error, "Timeout waiting for ack") {
		t.Errorf("resume on another instance after the producer died: HTTP %d, %q; want 500 (%s:253-262)", r.StatusCode, log[len(log)-1].Error, runtime)
	}
}
