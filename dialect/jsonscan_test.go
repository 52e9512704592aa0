package dialect

import (
	"bytes"
	"net/http"
	"reflect"
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
	// openai-chat: content as an array of parts (Mistral), refusal, reasoning_details, finish_reason
	`{"choices":[{"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]}]}}]}`,
	`{"choices":[{"delta":{"content":[{"type":"text","text":"4"}]},"finish_reason":null}]}`,
	`{"choices":[{"delta":{"content":[{"type":"thinking","thinking":[]},{"type":"text","text":""}]}}]}`,
	`{"choices":[{"delta":{"content":[{"type":"thinking","thinking":"s"},{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}`,
	`{"choices":[{"delta":{"content":[1,null,"x",[],{"type":1,"text":2},{"type":"text","text":"ok"}]}}]}`,
	`{"choices":[{"delta":{"content":[{"type":"text","text":"a","type":"thinking"}]}}]}`, `{"choices":[{"delta":{"content":[{"type":"thinking","thinking":"a","thinking":null}]}}]}`,
	`{"choices":[{"delta":{"content":[{"text":"a","type":"text","text":1}]}}]}`, `{"choices":[{"delta":{"content":[{"type":"thinking","thinking":[ ]}]}}]}`,
	`{"choices":[{"delta":{"content":"a","content":[]}}]}`, `{"choices":[{"delta":{"content":[{"type":"text","text":"x"}],"content":null}}]}`,
	`{"choices":[{"delta":{"content":{}}}]}`, `{"choices":[{"delta":{"content":true}}]}`, `{"usage":{"prompt_tokens":"x"},"choices":[{"delta":{"content":1}}]}`,
	`{"choices":[{"delta":{"content":1}},{"delta":{"content":{}}}],"usage":{"prompt_tokens":"x"}}`, `{"choices":[{"delta":{"content":[{"type":"text","text":"\u003cthink\u003e"}]}}]}`,
	`{"choices":[{"delta":{"role":"assistant","content":null,"refusal":""}}]}`, `{"choices":[{"delta":{"refusal":"I'm sorry"}}]}`, `{"choices":[{"delta":{"refusal":1}}]}`,
	`{"choices":[{"delta":{"refusal":"no","content":"yes"}}]}`, `{"choices":[{"delta":{"refusal":"no"}},{"delta":{"reasoning":"r"}}]}`,
	`{"choices":[{"delta":{"content":"","reasoning_details":[{"type":"reasoning.text","text":"15","index":0}]}}]}`,
	`{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.summary","summary":"s"}]}}]}`, `{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.encrypted","data":"x"}]}}]}`,
	`{"choices":[{"delta":{"reasoning_details":[{"text":"a"},{}]}}],"choices":[{"delta":{"reasoning_details":[{}]}}]}`, `{"choices":[{"delta":{"reasoning_details":[{"text":1}]}}]}`,
	`{"choices":[{"delta":{"reasoning_details":{}}}]}`, `{"choices":[{"delta":{"reasoning_details":[]}}]}`,
	`{"choices":[{"delta":{},"finish_reason":"stop"}]}`, `{"choices":[{"delta":{},"finish_reason":"length"}]}`, `{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"choices":[{"delta":{},"finish_reason":"content_filter"}]}`, `{"choices":[{"delta":{},"finish_reason":"function_call"}]}`, `{"choices":[{"finish_reason":"abort"}]}`,
	`{"choices":[{"finish_reason":"refusal"}]}`, `{"choices":[{"finish_reason":1}]}`, `{"choices":[{"finish_reason":"stop"},{"finish_reason":"length"},{"finish_reason":null}]}`,
	`{"choices":[{"finish_reason":"stop"}],"choices":[{}]}`, `{"choices":[{"finish_reason":"st\u006fp"}]}`, `{"choices":[{"delta":{"content":"x"},"finish_reason":"content_filter"}]}`,

	`{"choices":[{"delta":{"content":"x"}}],"choices":[{"delta":{"content":1}}]}`, `{"choices":[{"delta":{"content":1}}],"x":[}`,
	`{"type":"content_block_delta","delta":{"type":"text_delta","text":"hi"}}`, `{"type":"content_block_delta","delta":{"type":"text_delta","text":""}}`,
	`{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"{"}}`, `{"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"h"}}`,
	`{"type":"content_block_delta","delta":{"text":"a"},"delta":{"type":"text_delta"}}`, `{"type":"content_block_delta","delta":{"text":"a"},"delta":null,"delta":{"type":"text_delta"}}`,
	`{"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}`, `{"type":"message_start","message":{"usage":null}}`,
	`{"type":"message_start","message":{"usage":{"input_tokens":3}},"message":{"usage":{"output_tokens":4}}}`,
	`{"type":"message_start","message":{"usage":{"input_tokens":3}},"message":null,"message":{}}`,
	`{"type":"message_delta","usage":{"output_tokens":5}}`, `{"type":"message_delta","usage":{"output_tokens":"x"}}`, `{"type":"message_stop"}`,
	// anthropic-messages: cumulative usage, stop reasons, redacted thinking, server tools
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":22397,"output_tokens":637,"server_tool_use":{"web_search_requests":2}}}`,
	`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":124}}`, `{"type":"message_delta","delta":{"stop_reason":"refusal","stop_details":{"type":"refusal"}}}`,
	`{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`, `{"type":"message_delta","delta":{"stop_reason":"pause_turn"}}`, `{"type":"message_delta","delta":{"stop_reason":"stop_sequence"}}`,
	`{"type":"message_delta","delta":{"stop_reason":"model_context_window_exceeded"}}`, `{"type":"message_delta","delta":{"stop_reason":1}}`, `{"type":"message_delta","delta":null,"usage":null}`,
	`{"type":"message_delta","delta":{"stop_reason":"refusal"},"delta":{"stop_reason":null}}`, `{"type":"content_block_delta","delta":{"type":"text_delta","text":"x","stop_reason":"refusal"}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwK"}}`, `{"type":"content_block_start","content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}}`,
	`{"type":"content_block_start","content_block":{"type":"thinking","thinking":""}}`, `{"type":"content_block_start","content_block":null}`, `{"type":"content_block_start","content_block":{"type":2}}`,
	`{"type":"content_block_start","content_block":"x"}`, `{"type":"ping","content_block":{"type":"redacted_thinking"}}`,
	`{"type":"content_block_delta","delta":{"type":"signature_delta","signature":"EqQB"}}`, `{"type":"content_block_delta","delta":{"type":"citations_delta","citation":{"type":"web_search_result_location"}}}`,
	`{"type":"error","error":{"message":"overloaded"}}`, `{"type":"error"}`, `{"type":"ping","type":"message_stop"}`, `{"type":1}`,
	`{"type":"response.output_text.delta","sequence_number":3,"delta":"hi"}`, `{"type":"response.output_text.delta","sequence_number":3,"sequence_number":null,"delta":"hi"}`,
	`{"type":"response.reasoning_summary_text.delta","delta":"r"}`, `{"type":"response.reasoning.delta","delta":""}`, `{"type":"response.reasoning","delta":"x"}`,
	`{"type":"response.function_call_arguments.delta","delta":"{"}`, `{"type":"response.custom_tool_call_input.delta","delta":"x"}`,
	`{"type":"response.completed","response":{"id":"r\u00e9","usage":{"input_tokens":1,"output_tokens":2}}}`,
	`{"type":"response.created","response":{"id":"a"},"response":{"usage":{}}}`, `{"type":"response.created","response":{"id":"a"},"response":null,"response":{}}`,
	`{"type":"response.failed","response":{"error":{"message":"sk-fuzz-0123456789abcdef"}}}`, `{"type":"response.failed","response":{"error":null}}`,
	`{"type":"response.incomplete"}`, `{"type":"error","message":"x"}`, `{"type":"response.created","sequence_number":"7"}`,
	// openai-responses: nested errors, incomplete, refusal, hosted tools' deltas, images
	`{"type":"error","sequence_number":2,"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your current quota","param":null}}`,
	`{"type":"error","error":{"code":null,"message":"m"}}`, `{"type":"error","error":{"code":429,"message":"m"}}`, `{"type":"error","error":{"code":"c"}}`, `{"type":"error","error":{}}`,
	`{"type":"error","code":"ERR","message":"top"}`, `{"type":"error","code":"ERR","error":null}`, `{"type":"error","error":{"message":1}}`, `{"type":"error","error":"x"}`,
	`{"type":"error","code":"a","code":1}`, `{"type":"error","error":{"code":"a","code":null,"message":"m"}}`,
	`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}`, `{"type":"response.failed","response":{"error":{"code":"c"}}}`,
	`{"type":"response.failed"}`, `{"type":"response.failed","response":{"error":{}}}`,
	`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":15,"output_tokens":9}}}`,
	`{"type":"response.incomplete","response":{"incomplete_details":{"reason":"content_filter"}}}`, `{"type":"response.incomplete","response":{"incomplete_details":{"reason":"other"}}}`,
	`{"type":"response.incomplete","response":{"incomplete_details":null}}`, `{"type":"response.incomplete","response":{"incomplete_details":{"reason":1}}}`,
	`{"type":"response.incomplete","response":{"incomplete_details":[]}}`, `{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}},"response":{"incomplete_details":{}}}`,
	`{"type":"response.refusal.delta","delta":"I can't"}`, `{"type":"response.refusal.delta","delta":""}`, `{"type":"response.mcp_call_arguments.delta","delta":"{\"a\""}`,
	`{"type":"response.code_interpreter_call_code.delta","delta":"print(1)"}`, `{"type":"response.apply_patch_call_operation_diff.delta","delta":"+"}`,
	`{"type":"response.reasoning_text.delta","delta":"r"}`, `{"type":"response.audio.delta","delta":"AAA="}`, `{"type":"response.x.delta","delta":1}`,
	`{"type":"response.image_generation_call.partial_image","partial_image_b64":"UklG"}`, `{"type":"response.delta","delta":"x"}`, `{"type":".delta","delta":"x"}`,
	`{"type":"response.output_text.delta","delta":"\u003cthink\u003e"}`,
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
	`{"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"print(1)"}}]}}]}`, `{"candidates":[{"content":{"parts":[{"codeExecutionResult":{"outcome":"OUTCOME_OK"}}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBO"}}]},"finishReason":"STOP"}]}`, `{"candidates":[{"content":{"parts":[{"inlineData":null,"executableCode":1}]}}]}`,
	`{"candidates":[{"content":{"role":"model"}}]}`, `{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"x"}]},"finishReason":"STOP"}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"<redacted>"}],"role":"model"},"finishReason":"SAFETY"}]}`, `{"candidates":[{"finishReason":"RECITATION"}]}`,
	`{"candidates":[{"finishReason":"PROHIBITED_CONTENT"}]}`, `{"candidates":[{"finishReason":"IMAGE_SAFETY"}]}`, `{"candidates":[{"finishReason":"MALFORMED_FUNCTION_CALL"}]}`,
	`{"candidates":[{"finishReason":"FAKE_ENUM","content":{"parts":[{"text":"x"}]}}]}`, `{"candidates":[{"content":{"parts":[{"text":"t","thought":true},{"text":"a"}]}}]}`,
	`{"candidates":[{"content":{"parts":[{"text":"a"},{"text":"t","thought":true}]}}]}`, `{"candidates":[{"content":{"parts":[{"functionCall":{}},{"text":"t","thought":true}]}}]}`,
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
	`{"model":"deepseek-r1:14b","response":"\u003cthink\u003e","done":false}`, `{"done":true,"done_reason":"load"}`, `{"done":true,"done_reason":1}`,
	`{"done":false,"done_reason":"length"}`, `{"done":true,"done_reason":"length","done_reason":null}`, `{"message":{"content":"a"},"response":"b"}`,
	`{"message":{"thinking":"t","tool_calls":[{}]}}`, `{"message":{"tool_calls":[{}]},"thinking":"t"}`,
	// ai-sdk-ui
	`{"type":"start","messageId":"m"}`, `{"type":"text-delta","id":"t1","delta":"hi"}`, `{"type":"text-delta","id":"t1","delta":""}`,
	`{"type":"reasoning-delta","id":"r","delta":"x"}`, `{"type":"tool-input-start","toolCallId":"c","toolName":"f"}`,
	`{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"{\"a"}`, `{"type":"tool-input-delta","inputTextDelta":""}`,
	`{"type":"tool-input-available","toolCallId":"c","toolName":"f","input":{"a":1}}`, `{"type":"error","errorText":"An error occurred."}`,
	`{"type":"error","errorText":""}`, `{"type":"error","errorText":1}`, `{"type":"abort"}`, `{"type":"finish","finishReason":"stop"}`,
	`{"type":"text-delta","delta":"a","delta":null}`, `{"type":"text-delta","delta":5}`, `{"Type":"TEXT-DELTA","Delta":"x"}`, `{"type":"text-delta","DELTA":"x"}`,
	`{"type":"finish","finishReason":"length"}`, `{"type":"finish","finishReason":"content-filter"}`, `{"type":"finish","finishReason":"tool-calls"}`,
	`{"type":"finish","finishReason":"error"}`, `{"type":"finish","finishReason":"other"}`, `{"type":"finish","finishReason":1}`, `{"type":"finish"}`,
	`{"type":"text-delta","finishReason":"length"}`, `{"type":"file","url":"data:image/png;base64,iVBO","mediaType":"image/png"}`,
	`{"type":"text-delta","id":"0","delta":"\u003cthink\u003e"}`,
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
	// cohere
	`{"id":"m","type":"message-start","delta":{"message":{"role":"assistant","content":[],"tool_plan":"","tool_calls":[],"citations":[]}}}`,
	`{"type":"content-start","index":0,"delta":{"message":{"content":{"type":"text","text":""}}}}`,
	`{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"Hello"}}}}`, `{"type":"content-delta","delta":{"message":{"content":{"text":""}}}}`,
	`{"type":"content-delta","delta":{"message":{"content":{"type":"thinking","thinking":"hmm"}}}}`, `{"type":"content-delta","delta":{"message":{"content":[]}}}`,
	`{"type":"content-delta","delta":{"message":{"content":{"text":1}}}}`, `{"type":"content-delta","delta":{"message":{"content":null}}}`,
	`{"type":"content-delta","delta":{"message":{"content":{"text":"a"},"content":{"thinking":"b"}}}}`, `{"type":"content-delta","delta":{"message":{"content":"x"}}}`,
	`{"type":"content-delta","delta":{"message":{"content":{"text":"a"}},"message":{"tool_plan":""}}}`, `{"type":"content-delta","delta":{"message":{"CONTENT":{"TEXT":"x"}}}}`,
	`{"type":"tool-plan-delta","delta":{"message":{"tool_plan":"I will check."}}}`, `{"type":"tool-plan-delta","delta":{"message":{"tool_plan":5}}}`,
	`{"type":"tool-call-start","index":0,"delta":{"message":{"tool_calls":{"id":"c","type":"function","function":{"name":"f","arguments":""}}}}}`,
	`{"type":"tool-call-delta","index":0,"delta":{"message":{"tool_calls":[{"function":{"arguments":"{"}}]}}}`, `{"type":"tool-call-end","index":0}`,
	`{"type":"message-end","delta":{"finish_reason":"COMPLETE","usage":{"billed_units":{"input_tokens":5,"output_tokens":9},"tokens":{"input_tokens":71,"output_tokens":10}}}}`,
	`{"type":"message-end","delta":{"finish_reason":"MAX_TOKENS","usage":{"billed_units":{"input_tokens":5.0,"output_tokens":9.5}}}}`,
	`{"type":"message-end","delta":{"finish_reason":"ERROR","error":"internal error"}}`, `{"type":"message-end","delta":{"finish_reason":"ERROR_TOXIC"}}`,
	`{"type":"message-end","delta":{"usage":{"tokens":{"input_tokens":"3"}}}}`, `{"type":"message-end","delta":{"usage":{"tokens":null,"billed_units":{"output_tokens":1e400}}}}`,
	`{"type":"message-end","delta":{"usage":{"tokens":{"input_tokens":1}},"usage":{"billed_units":{}}}}`, `{"type":"message-end","delta":null}`, `{"delta":[]}`,
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
	"cohere":             refDecodeCohere,
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
// every field of the chunk, or the error.
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
	// Every field of the chunk, the content by its value (a dialect's is
	// the event's raw JSON string, the reference's the decoded one).
	gc, wc := got.Content.String(), want.Content.String()
	got.Content, want.Content = Content{}, Content{}
	if !bytes.Equal(got.Reply, want.Reply) {
		t.Fatalf("%s %q (event %q): reply\n got  %q\n want %q", dialect, data, typ, got.Reply, want.Reply)
	}
	got.Reply, want.Reply = nil, nil
	if !reflect.DeepEqual(got, want) || gc != wc {
		t.Fatalf("%s %q (event %q):\n got  %+v (content %q)\n want %+v (content %q)", dialect, data, typ, got, gc, want, wc)
	}
}

func FuzzDiffOpenAIChat(f *testing.F) { fuzzDiff(f, "openai-chat") }

func FuzzDiffAnthropic(f *testing.F) { fuzzDiff(f, "anthropic-messages") }

func FuzzDiffResponses(f *testing.F) { fuzzDiff(f, "openai-responses") }

func FuzzDiffGemini(f *testing.F) { fuzzDiff(f, "gemini") }

func FuzzDiffOllama(f *testing.F) { fuzzDiff(f, "ollama") }

func FuzzDiffAISDK(f *testing.F) { fuzzDiff(f, "ai-sdk-ui") }

func FuzzDiffMCP(f *testing.F) { fuzzDiff(f, "mcp") }

func FuzzDiffCohere(f *testing.F) { fuzzDiff(f, "cohere") }
