package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
	"github.com/streamprobe/streamprobe/probe"
)

// The real-world transcripts: streams real providers sent (OpenAI, Azure
// OpenAI, Anthropic, Gemini, Mistral, xAI, Groq, DeepSeek, Perplexity,
// Qwen, OpenRouter, vLLM, Z.ai, Snowflake, LM Studio, Ollama, and the AI
// SDK's UI stream made from them), recorded in public SDK repositories.
// They live beside the repository, in ../shared/realworld (fixtures/
// <dialect>/*, fixtures/manifest.json, SOURCES.md with each one's origin),
// and are read at test time, never copied in.

// realworldDir is the transcripts' folder beside the repository root, or
// "" when it is not there.
func realworldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	fixtures := filepath.Join(dir, "..", "shared", "realworld", "fixtures")
	if _, err := os.Stat(filepath.Join(fixtures, "manifest.json")); err != nil {
		return ""
	}
	return fixtures
}

// transcript is one entry of manifest.json.
type transcript struct {
	Name        string  `json:"name"`
	Dialect     string  `json:"dialect"`
	File        string  `json:"file"`
	Status      int     `json:"status"`
	ContentType string  `json:"content_type"`
	Model       *string `json:"model"`
	URLTail     *string `json:"url_tail"`
}

// The replay's pace: a block every replayPace, and a pause of
// replayPause before the block the definitions make the first effective
// output and before the one they make the first chunk, so that a record
// reading not before its block was due cannot be an earlier block's.
const (
	replayPace  = 2 * time.Millisecond
	replayPause = 150 * time.Millisecond
)

// TestRealWorldTranscripts replays every transcript through once (the
// command itself, -json) from the reference server, block by block as the
// provider's server ended them, and checks the record against what
// docs/dialects.md's definitions give for the transcript (expect, which
// reads the blocks with encoding/json, apart from the dialects'
// decoders): the outcome, the finish reason, the chunks, the reasoning
// events, and first_effective_ms and tfc_ms, each not before its block
// was due. It logs how far after that each reading came, per dialect.
func TestRealWorldTranscripts(t *testing.T) {
	dir := realworldDir(t)
	if dir == "" {
		msg := "the real-world transcripts are not beside the repository (../shared/realworld/fixtures/manifest.json)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + ", and CI must run this test")
		}
		t.Skip(msg)
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all []transcript
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(all) == 0 {
		t.Fatal("manifest.json lists no transcript")
	}
	var mu sync.Mutex
	lags := map[string][]float64{}
	t.Cleanup(func() { logLags(t, all, lags) })
	runs := []struct {
		tr      transcript
		noThink bool
	}{}
	for _, tr := range all {
		runs = append(runs, struct {
			tr      transcript
			noThink bool
		}{tr, false})
		if tr.Name == "ol-generate-deepseek-r1-think" {
			runs = append(runs, struct {
				tr      transcript
				noThink bool
			}{tr, true}) // and with -no-inline-think: all is the answer
		}
	}
	for _, r := range runs {
		name := r.tr.Name
		if r.noThink {
			name += "/no-inline-think"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join(dir, r.tr.File))
			if err != nil {
				t.Fatal(err)
			}
			got := replay(t, r.tr, body, r.noThink)
			mu.Lock()
			lags[r.tr.Dialect] = append(lags[r.tr.Dialect], got...)
			mu.Unlock()
		})
	}
}

// replay plays one transcript and checks its record; it returns how far
// after their blocks were due first_effective_ms and tfc_ms came.
func replay(t *testing.T, tr transcript, body []byte, noThink bool) []float64 {
	blocks := splitBlocks(body, tr.Dialect == "ollama")
	want := expect(tr, blocks, noThink)
	var steps []refserver.Step
	at := time.Duration(0)
	for i, bl := range blocks {
		at += replayPace
		if i == want.effective || i == want.tfc {
			at += replayPause
		}
		steps = append(steps, refserver.Step{At: at, Raw: string(bl)})
	}
	srv := refserver.NewUnstarted(steps)
	srv.ContentType = tr.ContentType
	if tr.Status != 200 {
		srv.Schedule, srv.Status, srv.ErrorBody = nil, tr.Status, string(body)
	}
	reftest.Serve(t, srv)
	args := []string{"-dialect", tr.Dialect, "-url", srv.URL + deref(tr.URLTail), "-name", tr.Name, "-json", "-timeout", reftest.RunDeadline.String()}
	if tr.Model != nil {
		args = append(args, "-model", *tr.Model)
	}
	if noThink {
		args = append(args, "-no-inline-think")
	}
	t.Logf("%s: the definitions give %s, finish_reason %q, %d chunks, %d reasoning events, first effective block %d, first chunk block %d (of %d)", tr.Name,
		want.outcome, want.finish, want.chunks, want.reasoning, want.effective, want.tfc, len(blocks))
	var out, errb bytes.Buffer
	cmdOnce(context.Background(), args, &out, &errb)
	var rec probe.Record
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
		t.Fatalf("once %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	if rec.Outcome != want.outcome || rec.FinishReason.String() != want.finish || rec.Chunks != want.chunks {
		t.Errorf("outcome %s, finish_reason %q, %d chunks (error %q); the definitions give %s, %q, %d", rec.Outcome, rec.FinishReason, rec.Chunks, rec.Error, want.outcome, want.finish, want.chunks)
	}
	if n := 0; rec.Reasoning != nil || want.reasoning > 0 {
		if rec.Reasoning != nil {
			n = rec.Reasoning.Chunks
		}
		if n != want.reasoning {
			t.Errorf("%d reasoning events, the definitions give %d", n, want.reasoning)
		}
	}
	if tr.Status != 200 {
		if rec.HTTPStatus != tr.Status {
			t.Errorf("HTTP %d, want %d", rec.HTTPStatus, tr.Status)
		}
		return nil
	}
	var lags []float64
	for _, m := range []struct {
		what  string
		got   *float64
		block int
	}{{"first_effective_ms", rec.FirstEffectiveMs, want.effective}, {"tfc_ms", rec.TFCMs, want.tfc}} {
		if m.block < 0 {
			if m.got != nil {
				t.Errorf("%s = %.3f, the definitions give none", m.what, *m.got)
			}
			continue
		}
		due := float64(srv.Schedule[m.block].At) / 1e6
		if m.got == nil || *m.got < due-0.001 {
			t.Errorf("%s = %v, want the reading of block %d, due at %.3f ms (%.60q)", m.what, reftest.Shown(m.got), m.block, due, blocks[m.block])
			continue
		}
		lags = append(lags, *m.got-due)
	}
	return lags
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// logLags logs, per dialect, how many transcripts ran and how far after
// its block was due each first_effective_ms and tfc_ms came (connection
// setup included): the agreement of the readings with the server.
func logLags(t *testing.T, all []transcript, lags map[string][]float64) {
	counts := map[string]int{}
	for _, tr := range all {
		counts[tr.Dialect]++
	}
	var names []string
	for d := range counts {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		l := lags[d]
		if len(l) == 0 {
			t.Logf("%-18s %2d transcripts, no reading to compare", d, counts[d])
			continue
		}
		slices.Sort(l)
		t.Logf("%-18s %2d transcripts, %3d readings after their block was due: median %.2f ms, max %.2f ms", d, counts[d], len(l), l[len(l)/2], l[len(l)-1])
	}
}

// splitBlocks cuts a body into what the server wrote at once: an SSE
// event or comment with the blank line that ends it (any line end), or
// an NDJSON line; a last block without its end stays as it is.
func splitBlocks(body []byte, ndjson bool) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(body); {
		end, n := lineEnd(body, i)
		if end < 0 {
			break
		}
		next := end + n
		if ndjson || end == i { // a line of NDJSON, or an SSE blank line
			if next > start {
				out = append(out, body[start:next])
			}
			start = next
		}
		i = next
	}
	if start < len(body) {
		out = append(out, body[start:])
	}
	return out
}

// lineEnd finds the end of the line at i: its index and length (CRLF 2,
// CR or LF 1), or -1.
func lineEnd(b []byte, i int) (int, int) {
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '\n':
			return j, 1
		case '\r':
			if j+1 < len(b) && b[j+1] == '\n' {
				return j, 2
			}
			return j, 1
		}
	}
	return -1, 0
}

// block is what the rules of the wire make of a written block: an event
// (its type and data), a comment, lines that are no field (a trailer), or
// an event cut off by the end of the body.
type block struct {
	kind      string // "event", "comment", "other", "cut"
	typ, data string
}

func parseBlock(b []byte, ndjson, last bool) block {
	s := string(b)
	if ndjson {
		if t := strings.TrimRight(s, "\r\n"); t != s || !last {
			return block{kind: "event", data: t}
		}
		return block{kind: "cut"}
	}
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	ended := strings.HasSuffix(s, "\n\n") || strings.HasSuffix(s, "\r\n\r\n") || strings.HasSuffix(s, "\r\r")
	var bl block
	var data []string
	other := false
	for _, l := range lines {
		field, value, _ := strings.Cut(l, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			bl.kind = "comment"
		case "data":
			data = append(data, value)
		case "event":
			bl.typ = value
		case "id", "retry":
		default:
			other = true
		}
	}
	switch {
	case data != nil && !ended:
		return block{kind: "cut"}
	case data != nil:
		bl.kind, bl.data = "event", strings.Join(data, "\n")
	case other:
		bl.kind, bl.data = "other", strings.Join(lines, "\n")
	}
	return bl
}

// expected is what the definitions give for a transcript: the outcome,
// the finish reason's name, the chunks, the reasoning events, and the
// blocks of the first effective output and of the first chunk (-1: none).
type expected struct {
	outcome        probe.Outcome
	finish         string
	chunks         int
	reasoning      int
	effective, tfc int
	refused, final bool
	think          thinkState
	thinkOff       bool
	trailer        string // gemini: the lines after the last event that are no field
}

// expect applies docs/dialects.md's definitions to a transcript's blocks,
// event by event, as the engine takes them.
func expect(tr transcript, blocks [][]byte, noThink bool) expected {
	w := expected{effective: -1, tfc: -1, thinkOff: noThink}
	if tr.Status != 200 {
		w.outcome = probe.UpstreamError
		return w
	}
	w.outcome = w.walk(tr.Dialect, blocks)
	if w.refused && w.finish != "content_filter" {
		w.finish = "refusal" // the model's refusal, whatever reason closed it
	}
	return w
}

// walk takes the blocks in order and returns the outcome.
func (w *expected) walk(dialect string, blocks [][]byte) probe.Outcome {
	for i, raw := range blocks {
		bl := parseBlock(raw, dialect == "ollama", i == len(blocks)-1)
		switch {
		case bl.kind == "event" && bl.data != "":
			w.trailer = ""
			if o, over := w.take(i, classify(dialect, bl)); over {
				return o
			}
		case bl.kind == "event":
			w.trailer = ""
		case bl.kind == "cut":
			return probe.UpstreamError // the body ended inside an event
		case bl.kind == "other" && dialect == "gemini":
			w.trailer += bl.data
		}
	}
	switch {
	case w.trailer != "": // Gemini's error object after the last event
		if m, ok := jsonMap(w.trailer); ok && m["error"] != nil {
			return probe.UpstreamError
		}
		return probe.ProtocolError
	case w.final:
		return w.end()
	}
	return probe.UpstreamError // no end marker
}

// take applies one event's class: the outcome when it ends the run.
func (w *expected) take(i int, c class) (probe.Outcome, bool) {
	if c.finish != "" {
		w.finish = c.finish
	}
	if c.refusal || c.finish == "refusal" || c.finish == "content_filter" {
		w.refused = true
	}
	w.final = w.final || c.final
	switch c.kind {
	case "text":
		reasoning, text := false, true
		if !c.refusal {
			reasoning, text = w.think.scan(c.content, w.thinkOff)
		}
		if reasoning {
			w.effectiveAt(i, true)
		}
		if text {
			w.chunks++
			if w.tfc < 0 {
				w.tfc = i
			}
			w.effectiveAt(i, false)
		}
	case "reasoning", "effective":
		w.effectiveAt(i, c.kind == "reasoning")
	case "end":
		return w.end(), true
	case "error":
		return probe.UpstreamError, true
	case "undecodable":
		return probe.ProtocolError, true
	}
	return "", false
}

func (w *expected) effectiveAt(i int, reasoning bool) {
	if w.effective < 0 {
		w.effective = i
	}
	if reasoning {
		w.reasoning++
	}
}

// end is the outcome at the end marker.
func (w *expected) end() probe.Outcome {
	if w.refused {
		return probe.Refused
	}
	return probe.Success
}

// thinkState is the definition of the inline reasoning block on the
// decoded texts: the first text with more than white space decides; the
// block runs to </think> however the texts cut it; white space after it
// belongs to no chunk.
type thinkState struct {
	state int // 0 undecided, 1 in the block, 2 after it, 3 the answer (or no block)
	buf   string
}

func (th *thinkState) scan(text string, off bool) (reasoning, isText bool) {
	if off {
		return false, true
	}
	trimmed := strings.TrimLeft(text, " \t\r\n")
	switch th.state {
	case 0:
		if trimmed == "" {
			return false, true
		}
		if !strings.HasPrefix(trimmed, "<think>") {
			th.state = 3
			return false, true
		}
		th.state, th.buf = 1, ""
		text = strings.TrimPrefix(trimmed, "<think>")
		fallthrough
	case 1:
		before := len(th.buf)
		th.buf += text
		k := strings.Index(th.buf, "</think>")
		if k < 0 {
			return true, false
		}
		rest := th.buf[max(k+len("</think>"), before):]
		th.state = 2
		if strings.TrimLeft(rest, " \t\r\n") != "" {
			th.state = 3
			return true, true
		}
		return true, false
	case 2:
		if trimmed == "" {
			return false, false
		}
		th.state = 3
	}
	return false, true
}

// class is what the definitions make of one event.
type class struct {
	kind    string // "meta", "text", "reasoning", "effective", "end", "error", "liveness", "undecodable"
	content string
	refusal bool
	finish  string
	final   bool
}

// filled reports a string or an array that is not empty.
func filled(v any) bool {
	switch v := v.(type) {
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	}
	return false
}

func jsonMap(s string) (map[string]any, bool) {
	var m map[string]any
	err := json.Unmarshal([]byte(s), &m)
	return m, err == nil && m != nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func obj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

func arr(m map[string]any, k string) []any {
	a, _ := m[k].([]any)
	return a
}

// classify is docs/dialects.md's table for one event of a dialect.
func classify(dialect string, bl block) class {
	if bl.data == "[DONE]" && (dialect == "openai-chat" || dialect == "ai-sdk-ui") {
		return class{kind: "end"}
	}
	m, ok := jsonMap(bl.data)
	if !ok {
		return class{kind: "undecodable"}
	}
	switch dialect {
	case "openai-chat":
		return classifyChat(m)
	case "openai-responses":
		typ := str(m, "type")
		if typ == "" {
			typ = bl.typ
		}
		return classifyResponses(typ, m)
	case "anthropic-messages":
		if str(m, "type") == "" {
			m["type"] = bl.typ
		}
		return classifyAnthropic(m)
	case "gemini":
		return classifyGemini(m)
	case "ollama":
		return classifyOllama(m)
	case "ai-sdk-ui":
		return classifyAISDK(m)
	}
	panic("no definitions for " + dialect)
}

func classifyChat(m map[string]any) class {
	if obj(m, "error") != nil {
		return class{kind: "error"}
	}
	c := class{kind: "meta"}
	var text, refusal, reasoning, effective bool
	for _, ch := range arr(m, "choices") {
		ch, _ := ch.(map[string]any)
		switch r := str(ch, "finish_reason"); r {
		case "":
		case "stop", "length", "content_filter", "refusal":
			c.finish = r
		case "tool_calls", "function_call":
			c.finish = "tool_calls"
		default:
			c.finish = "other"
		}
		d := obj(ch, "delta")
		switch v := d["content"].(type) {
		case string:
			if v != "" && !text {
				text, c.content = true, v
			}
		case []any: // Mistral: parts
			for _, p := range v {
				p, _ := p.(map[string]any)
				switch {
				case str(p, "type") == "text" && str(p, "text") != "" && !text:
					text, c.content = true, str(p, "text")
				case str(p, "type") == "thinking" && filled(p["thinking"]):
					reasoning = true
				}
			}
		}
		refusal = refusal || str(d, "refusal") != ""
		reasoning = reasoning || str(d, "reasoning_content") != "" || str(d, "reasoning") != ""
		for _, rd := range arr(d, "reasoning_details") {
			rd, _ := rd.(map[string]any)
			reasoning = reasoning || str(rd, "text") != "" || str(rd, "summary") != ""
		}
		for _, tc := range arr(d, "tool_calls") {
			tc, _ := tc.(map[string]any)
			effective = effective || str(obj(tc, "function"), "arguments") != ""
		}
	}
	switch {
	case text:
		c.kind = "text"
	case refusal:
		c.kind, c.refusal = "text", true
	case reasoning:
		c.kind = "reasoning"
	case effective:
		c.kind = "effective"
	}
	return c
}

func classifyResponses(typ string, m map[string]any) class {
	delta := str(m, "delta")
	switch {
	case typ == "response.output_text.delta" && delta != "":
		return class{kind: "text", content: delta}
	case typ == "response.refusal.delta" && delta != "":
		return class{kind: "text", refusal: true}
	case strings.HasPrefix(typ, "response.reasoning") && strings.HasSuffix(typ, ".delta") && delta != "":
		return class{kind: "reasoning"}
	case strings.HasPrefix(typ, "response.") && strings.HasSuffix(typ, ".delta") && delta != "",
		typ == "response.image_generation_call.partial_image":
		return class{kind: "effective"}
	case typ == "response.completed":
		return class{kind: "end", finish: "stop"}
	case typ == "response.incomplete":
		switch str(obj(obj(m, "response"), "incomplete_details"), "reason") {
		case "max_output_tokens":
			return class{kind: "end", finish: "length"}
		case "content_filter":
			return class{kind: "end", finish: "content_filter"}
		}
		return class{kind: "error", finish: "other"}
	case typ == "response.failed":
		return class{kind: "error", finish: "error"}
	case typ == "error":
		return class{kind: "error"}
	}
	return class{kind: "meta"}
}

func classifyAnthropic(m map[string]any) class {
	d := obj(m, "delta")
	switch str(m, "type") {
	case "ping":
		return class{kind: "liveness"}
	case "content_block_start":
		if str(obj(m, "content_block"), "type") == "redacted_thinking" {
			return class{kind: "reasoning"}
		}
	case "content_block_delta":
		switch {
		case str(d, "type") == "text_delta" && str(d, "text") != "":
			return class{kind: "text", content: str(d, "text")}
		case str(d, "type") == "thinking_delta" && str(d, "thinking") != "":
			return class{kind: "reasoning"}
		case str(d, "type") == "input_json_delta" && str(d, "partial_json") != "":
			return class{kind: "effective"}
		}
	case "message_delta":
		switch r := str(d, "stop_reason"); r {
		case "":
		case "end_turn", "stop_sequence":
			return class{kind: "meta", finish: "stop"}
		case "max_tokens", "model_context_window_exceeded":
			return class{kind: "meta", finish: "length"}
		case "tool_use":
			return class{kind: "meta", finish: "tool_calls"}
		case "refusal":
			return class{kind: "meta", finish: "refusal"}
		default:
			return class{kind: "meta", finish: "other"}
		}
	case "message_stop":
		return class{kind: "end"}
	case "error":
		return class{kind: "error"}
	}
	return class{kind: "meta"}
}

func classifyGemini(m map[string]any) class {
	if obj(m, "error") != nil {
		return class{kind: "error"}
	}
	if str(obj(m, "promptFeedback"), "blockReason") != "" {
		return class{kind: "meta", final: true, finish: "content_filter"}
	}
	cands := arr(m, "candidates")
	if len(cands) == 0 {
		return class{kind: "meta"}
	}
	cand, _ := cands[0].(map[string]any)
	c := class{kind: "meta"}
	switch r := str(cand, "finishReason"); r {
	case "":
	case "STOP":
		c.final, c.finish = true, "stop"
	case "MAX_TOKENS":
		c.final, c.finish = true, "length"
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		c.final, c.finish = true, "content_filter"
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MISSING_THOUGHT_SIGNATURE",
		"LANGUAGE", "NO_IMAGE", "IMAGE_OTHER", "OTHER", "FINISH_REASON_UNSPECIFIED":
		return class{kind: "error", finish: "error"}
	default:
		return class{kind: "error", finish: "other"}
	}
	for _, p := range arr(obj(cand, "content"), "parts") {
		p, _ := p.(map[string]any)
		thought, _ := p["thought"].(bool)
		switch {
		case str(p, "text") != "" && !thought:
			c.kind, c.content = "text", str(p, "text")
			return c
		case str(p, "text") != "":
			c.kind = "reasoning"
		case p["functionCall"] != nil, p["executableCode"] != nil, p["inlineData"] != nil:
			if c.kind == "meta" {
				c.kind = "effective"
			}
		}
	}
	return c
}

func classifyOllama(m map[string]any) class {
	msg := obj(m, "message")
	switch {
	case str(m, "error") != "":
		return class{kind: "error"}
	case m["done"] == true:
		f := str(m, "done_reason")
		if f != "" && f != "stop" && f != "length" {
			f = "other"
		}
		return class{kind: "end", finish: f}
	case str(msg, "content") != "":
		return class{kind: "text", content: str(msg, "content")}
	case str(m, "response") != "":
		return class{kind: "text", content: str(m, "response")}
	case str(msg, "thinking") != "" || str(m, "thinking") != "":
		return class{kind: "reasoning"}
	case len(arr(msg, "tool_calls")) > 0:
		return class{kind: "effective"}
	}
	return class{kind: "meta"}
}

func classifyAISDK(m map[string]any) class {
	switch str(m, "type") {
	case "text-delta":
		if d := str(m, "delta"); d != "" {
			return class{kind: "text", content: d}
		}
	case "reasoning-delta":
		if str(m, "delta") != "" {
			return class{kind: "reasoning"}
		}
	case "tool-input-delta":
		if str(m, "inputTextDelta") != "" {
			return class{kind: "effective"}
		}
	case "tool-input-available", "file":
		return class{kind: "effective"}
	case "finish":
		f := map[string]string{"": "", "stop": "stop", "length": "length", "tool-calls": "tool_calls", "content-filter": "content_filter", "error": "error"}
		r, ok := f[str(m, "finishReason")]
		if !ok {
			r = "other"
		}
		return class{kind: "meta", finish: r}
	case "error", "abort":
		return class{kind: "error"}
	}
	return class{kind: "meta"}
}
