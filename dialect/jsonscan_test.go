package dialect

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// diffSeeds are inputs where a hand-written JSON reader most easily parts
// from encoding/json: syntax errors at every kind of place, escapes,
// surrogate pairs (valid, lone, reversed), invalid UTF-8, nulls, duplicate
// keys (merging, and arrays reusing elements past the new length), keys
// that only case-fold to a field name (K, ſ, ı), integers that do not fit,
// nested objects in unexpected places, deep nesting.
var diffSeeds = []string{
	``, ` `, `null`, ` null `, `true`, `1`, `"x"`, `[]`, `{}`, `{} x`, `{`, `{"`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `{"a":1,}`,
	`{,}`, `{"a" 1}`, `[1,]`, `[,1]`, `{"a":[1 2]}`, `{"a":-}`, `{"a":01}`, `{"a":1.}`, `{"a":1.e5}`, `{"a":1e}`, `{"a":1e+}`,
	`{"a":tru}`, `{"a":nul}`, `{"a":nulx}`, `{"a":"\x"}`, `{"a":"\u12g4"}`, `{"a":"` + "\x01" + `"}`, `{"a":"` + "\xff" + `"}`,
	"\xef\xbb\xbf{}", `{"a":1}}`, `{"a":"\u00e9\ud83d\ude00\ud83d\u0041\ude00\ud800"}`,
	`{"type":"error","message":"\ud83d\ude00 ok","error":{"message":"lone \udc00 and \ud800\ud800 and ` + "\xc3\x28" + `"}}`,
	`{"type":"\u0065rror","message":"escaped type"}`, `{"TYPE":"ping"}`, `{"Type":"ping","type":null}`,
	`{"\u0074ype":"ping"}`, `{"typ\u0065":"ping"}`, `{"ſ":1}`, `{"meſſage":"long s"}`, `{"type":"error","meſſage":"long s"}`,
	`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"role":"assistant"}}]}`,
	`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}},{}],"choices":[{}],"choices":[{},{}]}`,
	`{"choices":[{"delta":{"content":"a"}}],"choices":[],"choices":[{}]}`,
	`{"choices":[{"delta":{"content":"a"}}],"choices":null,"choices":[{}]}`,
	`{"choices":[{"delta":{"content":"a"}}],"choices":[null]}`,
	`{"choices":[{"delta":{"content":"a","content":""}}]}`, `{"choices":[{"delta":{"content":"a","content":null}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"x"}},{}]}}],"choices":[{"delta":{"tool_calls":[{}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{},{"function":{"arguments":"x"}}]}}],"choices":[{"delta":{"tool_calls":[{}]}}],"choices":[{"delta":{"tool_calls":[{},{}]}}]}`,
	`{"choices":[{},{},{},{"delta":{"reasoning":"r"}}],"choices":[{}],"choices":[{},{},{},{}]}`,
	`{"cHoIcEs":[{"DELTA":{"Content":"x"}}]}`, `{"choices":[{"delta":{"reasoning_content":"r"}}]}`,
	`{"choices":[{"delta":{"content":1}}]}`, `{"choices":[{"delta":[]}]}`, `{"choices":{}}`, `{"choices":[1]}`, `{"choices":"x"}`,
	`{"choices":[{"delta":{"tool_calls":{}}}]}`, `{"choices":[{"delta":{"tool_calls":[{"function":[]}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":{}}}]}}]}`, `{"choices":[{"delta":{"tool_calls":[true]}}]}`,
	`{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`, `{"usage":{"prompt_tokens":1},"usage":null,"usage":{"completion_tokens":2}}`,
	`{"usage":{"prompt_tokens":1.5}}`, `{"usage":{"prompt_tokens":1e2}}`, `{"usage":{"prompt_tokens":-0}}`, `{"usage":{"prompt_tokens":"1"}}`,
	`{"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":-9223372036854775808}}`,
	`{"usage":{"prompt_tokens":9223372036854775808}}`, `{"usage":{"prompt_tokens":-9223372036854775809}}`, `{"usage":{"prompt_tokens":99999999999999999999}}`,
	`{"usage":[]}`, `{"usage":1,"choices":2}`, `{"error":null}`, `{"error":{}}`, `{"error":{"message":null}}`, `{"error":"x"}`, `{"error":{"message":1}}`,
	`{"x":{"choices":[{"delta":{"content":"nested"}}]},"y":[{"error":{}}],"z":{"a":{"b":[{"c":{}}]}}}`,
	`{"choices":[{"delta":{"content":"x"}}],"choices":[{"delta":{"content":1}}]}`, `{"choices":[{"delta":{"content":1}}],"x":[}`,
	`{"type":"content_block_delta","delta":{"type":"text_delta","text":"hi"}}`, `{"type":"content_block_delta","delta":{"type":"text_delta","text":""}}`,
	`{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"{"}}`, `{"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"h"}}`,
	`{"type":"content_block_delta","delta":{"text":"a"},"delta":{"type":"text_delta"}}`, `{"type":"content_block_delta","delta":{"text":"a"},"delta":null,"delta":{"type":"text_delta"}}`,
	`{"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}`, `{"type":"message_start","message":{"usage":null}}`,
	`{"type":"message_start","message":{"usage":{"input_tokens":3}},"message":{"usage":{"output_tokens":4}}}`,
	`{"type":"message_start","message":{"usage":{"input_tokens":3}},"message":null,"message":{}}`,
	`{"type":"message_delta","usage":{"output_tokens":5}}`, `{"type":"message_delta","usage":{"output_tokens":"x"}}`, `{"type":"message_stop"}`,
	`{"type":"error","error":{"message":"overloaded"}}`, `{"type":"error"}`, `{"type":"ping","type":"message_stop"}`, `{"type":1}`,
	`{"type":"response.output_text.delta","sequence_number":3,"delta":"hi"}`, `{"type":"response.output_text.delta","sequence_number":3,"sequence_number":null,"delta":"hi"}`,
	`{"type":"response.reasoning_summary_text.delta","delta":"r"}`, `{"type":"response.reasoning.delta","delta":""}`, `{"type":"response.reasoning","delta":"x"}`,
	`{"type":"response.function_call_arguments.delta","delta":"{"}`, `{"type":"response.custom_tool_call_input.delta","delta":"x"}`,
	`{"type":"response.completed","response":{"id":"r\u00e9","usage":{"input_tokens":1,"output_tokens":2}}}`,
	`{"type":"response.created","response":{"id":"a"},"response":{"usage":{}}}`, `{"type":"response.created","response":{"id":"a"},"response":null,"response":{}}`,
	`{"type":"response.failed","response":{"error":{"message":"sk-fuzz-0123456789abcdef"}}}`, `{"type":"response.failed","response":{"error":null}}`,
	`{"type":"response.incomplete"}`, `{"type":"error","message":"x"}`, `{"type":"response.created","sequence_number":"7"}`,
	`{"sequence_number":1.0}`, `{"sequence_number":-1}`, `{"sequence_number":12345678901234567890}`, `{"response":{"id":1}}`, `{"response":{"usage":{"input_tokens":[]}}}`,
	`[DONE]`, `[[[[{"choices":[[{}]]}]]]]`, `{"a":[{"b":[{"c":{"d":[[]]}}]}]}`,
	// gemini
	`{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"},"index":0}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"plan","thought":true}]}}]}`, `{"candidates":[{"content":{"parts":[{"text":"a","thought":"yes"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"a","thought":true,"thought":null}]}}]}`, `{"candidates":[{"content":{"parts":[{"thought":false,"text":"a"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1}}}]}}]}`, `{"candidates":[{"content":{"parts":[{"functionCall":{}},{"functionCall":null}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":{"x":1}}]}}],"candidates":[{"content":{"parts":[{"functionCall":null}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"functionCall":"f"}]}}]}`, `{"candidates":[{"content":{"parts":[{"functionCall":{"name":1}}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":3,"thoughtsTokenCount":2}}`,
	`{"candidates":[{"finishReason":"MAX_TOKENS"}]}`, `{"candidates":[{"finishReason":"SAFETY","content":{"parts":[{"text":"x"}]}}]}`,
	`{"candidates":[{"finishReason":"S\u0041FETY"}]}`, `{"candidates":[{"finishReason":"STOP"},{"finishReason":"SAFETY"}]}`, `{"candidates":[{"finishReason":1}]}`,
	`{"candidates":[{"content":null,"finishReason":null}]}`, `{"candidates":[{"content":{"parts":null}}]}`, `{"candidates":[{"content":{"parts":{}}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"candidates":[{"content":{}}]}`, `{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"candidates":[{"content":{"parts":[]}}]}`,
	`{"candidates":[{"content":{"parts":[{},{"text":"b"}]}}],"candidates":[{"content":{"parts":[{}]}}],"candidates":[{"content":{"parts":[{},{}]}}]}`,
	`{"promptFeedback":{"blockReason":"SAFETY"}}`, `{"promptFeedback":{"blockReason":""}}`, `{"promptFeedback":null}`, `{"promptFeedback":{"blockReason":2}}`,
	`{"usageMetadata":{"promptTokenCount":1},"usageMetadata":{"thoughtsTokenCount":2}}`, `{"usageMetadata":null}`, `{"usageMetadata":{"candidatesTokenCount":"3"}}`,
	`{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}`, `{"error":{"status":"INTERNAL"}}`, `{"error":{"status":5}}`,
	`{"CANDIDATES":[{"Content":{"PARTS":[{"TEXT":"x"}]}}]}`, `{"candidates":[{"content":{"parts":[{"ſext":"x"}]}}]}`,
	// ollama
	`{"model":"m","created_at":"2026-12-05T13:00:00Z","message":{"role":"assistant","content":"hi"},"done":false}`,
	`{"message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}`, `{"message":{"content":"","tool_calls":[{"function":{"name":"f","arguments":{}}}]},"done":false}`,
	`{"message":{"tool_calls":[null]}}`, `{"message":{"tool_calls":[1]}}`, `{"message":{"tool_calls":{}}}`, `{"message":{"tool_calls":[{}]},"message":{"tool_calls":null}}`,
	`{"message":{"tool_calls":[{}]},"message":{"content":""}}`, `{"message":null,"done":null}`, `{"message":[]}`,
	`{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":123,"prompt_eval_count":26,"eval_count":290}`,
	`{"done":true,"done_reason":"length","eval_count":64}`, `{"done":"true"}`, `{"done":1}`, `{"done":true,"done":false}`, `{"eval_count":1.5,"done":true}`,
	`{"error":"model 'x' not found"}`, `{"error":""}`, `{"error":{"message":"x"}}`, `{"error":"x","done":true}`, `{"response":"hi","done":false}`, `{"thinking":"t"}`,
	`{"Done":true,"PROMPT_EVAL_COUNT":3}`, `{"meſſage":{"content":"x"}}`,
	// ai-sdk-ui
	`{"type":"start","messageId":"m"}`, `{"type":"text-delta","id":"t1","delta":"hi"}`, `{"type":"text-delta","id":"t1","delta":""}`,
	`{"type":"reasoning-delta","id":"r","delta":"x"}`, `{"type":"tool-input-start","toolCallId":"c","toolName":"f"}`,
	`{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"{\"a"}`, `{"type":"tool-input-delta","inputTextDelta":""}`,
	`{"type":"tool-input-available","toolCallId":"c","toolName":"f","input":{"a":1}}`, `{"type":"error","errorText":"An error occurred."}`,
	`{"type":"error","errorText":""}`, `{"type":"error","errorText":1}`, `{"type":"abort"}`, `{"type":"finish","finishReason":"stop"}`,
	`{"type":"text-delta","delta":"a","delta":null}`, `{"type":"text-delta","delta":5}`, `{"Type":"TEXT-DELTA","Delta":"x"}`, `{"type":"text-delta","DELTA":"x"}`,
	// mcp (the call's id and token are "streamprobe" with no run id)
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"streamprobe","progress":3,"total":10}}`,
	`{"method":"notifications/progress","params":{"progressToken":"other","progress":1}}`, `{"method":"notifications/progress","params":{"progressToken":7,"progress":1}}`,
	`{"method":"notifications/progress","params":{"progressToken":"str\u0065amprobe","progress":1.5e2}}`, `{"method":"notifications/progress","params":{"progress":"1"}}`,
	`{"method":"notifications/progress","params":{"progressToken":"streamprobe","progress":1e999}}`, `{"method":"notifications/progress","params":null}`,
	`{"jsonrpc":"2.0","id":"streamprobe","result":{"content":[{"type":"text","text":"ok"}]}}`, `{"id":"streamprobe","result":{"isError":true}}`,
	`{"id":"streamprobe","result":null}`, `{"id":"streamprobe","error":{"code":-32602,"message":"Unknown tool"}}`, `{"id":"streamprobe","error":{"code":1}}`,
	`{"id":"streamprobe"}`, `{"id":null,"error":{"message":"parse error"}}`, `{"id":2,"result":{}}`, `{"id":"other","result":{}}`,
	`{"id":1,"method":"ping"}`, `{"method":"notifications/message","params":{"level":"info","data":"x"}}`, `{"method":5}`, `{"result":5,"id":"streamprobe"}`,
	`{"id":"streamprobe","result":{"isError":"yes"}}`, `{"id":"x","id":"streamprobe","result":{}}`, `{"id":"streamprobe","id":1,"result":{}}`, `{"ID":"streamprobe","RESULT":{}}`,
	`[{"id":"streamprobe","result":{}}]`, `{"params":{"progressToken":"streamprobe"},"params":{"progress":2},"method":"notifications/progress"}`,
}

// refs are the reference decoders by dialect.
var refs = map[string]func(Target, *resumeclient.Event) (Chunk, error){
	"openai-chat":        refDecodeOpenAIChat,
	"anthropic-messages": refDecodeAnthropic,
	"openai-responses":   refDecodeResponses,
	"gemini":             refDecodeGemini,
	"ollama":             refDecodeOllama,
	"ai-sdk-ui":          refDecodeAISDK,
	"mcp":                refDecodeMCP,
}

// Nesting at and past encoding/json's limit of 10000 (too big for a fuzz
// seed): the same error at the same byte.
func TestDecodeDepthLimit(t *testing.T) {
	t.Parallel()
	for dialect := range refs {
		for _, data := range []string{deep(9999), deep(10000), deep(10001), `{"choices":[` + deep(9999) + `]}`, `{"a":` + deep(10000) + `}`, `{"type":"x","delta":{"x":` + deep(10000) + `}}`} {
			diffCheck(t, dialect, []byte(data), nil)
		}
	}
}

// deep is n nested arrays.
func deep(n int) string {
	b := make([]byte, 0, 2*n)
	for range n {
		b = append(b, '[')
	}
	for range n {
		b = append(b, ']')
	}
	return string(b)
}

// fuzzDiff runs dialect's Decode and its encoding/json reference on the
// same event and fails on any difference in what the probe takes from it:
// the chunk (kind, usage, message, cursor, response id) or the error.
func fuzzDiff(f *testing.F, dialect string) {
	for _, s := range diffSeeds {
		f.Add([]byte(s), []byte(""))
	}
	f.Add([]byte(`{}`), []byte("ping"))
	f.Add([]byte(`{"type":""}`), []byte("error"))
	f.Add([]byte(`null`), []byte("message_stop"))
	f.Add([]byte(`{"delta":"x"}`), []byte("response.output_text.delta"))
	f.Fuzz(func(t *testing.T, data, typ []byte) { diffCheck(t, dialect, data, typ) })
}

// diffCheck fails t when dialect's Decode and its reference differ on an
// event.
func diffCheck(t *testing.T, dialect string, data, typ []byte) {
	t.Helper()
	tg := Target{Header: http.Header{"Authorization": {"Bearer " + fuzzKey}}}
	ev := &resumeclient.Event{Kind: resumeclient.KindEvent, Data: data, Type: typ}
	got, gerr := Dialects[dialect].Decode(tg, ev)
	want, werr := refs[dialect](tg, ev)
	if len(data) > 200 {
		data = append(data[:100:100], "..."...)
	}
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("%s %q (event %q): error\n got  %v\n want %v", dialect, data, typ, gerr, werr)
	}
	if got.Kind != want.Kind || got.Message != want.Message || got.Cursor != want.Cursor || got.HasCursor != want.HasCursor ||
		got.ResponseID != want.ResponseID || got.Final != want.Final || got.HasUsage != want.HasUsage || got.Usage != want.Usage ||
		got.IsEnd != want.IsEnd || got.Unrelated != want.Unrelated || got.Foreign != want.Foreign || got.HasSeq != want.HasSeq || got.Seq != want.Seq ||
		!bytes.Equal(got.Reply, want.Reply) {
		t.Fatalf("%s %q (event %q):\n got  %+v (usage %+v)\n want %+v (usage %+v)", dialect, data, typ, got, got.Usage, want, want.Usage)
	}
}

func FuzzDiffOpenAIChat(f *testing.F) { fuzzDiff(f, "openai-chat") }

func FuzzDiffAnthropic(f *testing.F) { fuzzDiff(f, "anthropic-messages") }

func FuzzDiffResponses(f *testing.F) { fuzzDiff(f, "openai-responses") }

func FuzzDiffGemini(f *testing.F) { fuzzDiff(f, "gemini") }

func FuzzDiffOllama(f *testing.F) { fuzzDiff(f, "ollama") }

func FuzzDiffAISDK(f *testing.F) { fuzzDiff(f, "ai-sdk-ui") }

func FuzzDiffMCP(f *testing.F) { fuzzDiff(f, "mcp") }
