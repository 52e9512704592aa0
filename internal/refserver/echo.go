package refserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// EchoKeyDialects are the wire formats EchoKey can answer in: a provider's
// error inside the stream.
var EchoKeyDialects = []string{"openai-chat", "anthropic-messages", "openai-responses", "openai-responses-failed",
	"openai-responses-nested", "gemini-after-last-event"}

// EchoKeyDialect is the dialect an EchoKey variant answers in
// ("openai-responses-failed" is openai-responses).
func EchoKeyDialect(echo string) string {
	for _, suffix := range []string{"-failed", "-nested", "-after-last-event"} {
		echo = strings.TrimSuffix(echo, suffix)
	}
	return echo
}

// EchoKey returns a ScheduleFor that answers every request with one error
// event in dialect's wire format (one of EchoKeyDialects) whose message
// quotes the request's key, its bearer token or X-Api-Key, after as many
// bytes of text as the request's pad query parameter says: a server that
// echoes a secret back, at any offset of its message.
// It panics, when called, on an unknown dialect.
func EchoKey(dialect string) func(r *http.Request, body []byte) []Step {
	if !slices.Contains(EchoKeyDialects, dialect) {
		panic("refserver: EchoKey: unknown dialect " + dialect)
	}
	return func(r *http.Request, _ []byte) []Step {
		key := r.Header.Get("X-Api-Key")
		if a := r.Header.Get("Authorization"); a != "" {
			key = strings.TrimPrefix(a, "Bearer ")
		}
		pad, _ := strconv.Atoi(r.URL.Query().Get("pad"))
		msg := strings.Repeat("x", max(pad, 0)) + key + " is not a valid key"
		var ev map[string]any
		typ := ""
		switch dialect {
		case "openai-chat":
			ev = map[string]any{"error": map[string]string{"message": msg, "type": "invalid_request_error"}}
		case "anthropic-messages":
			typ = "error"
			ev = map[string]any{"type": typ, "error": map[string]string{"type": "authentication_error", "message": msg}}
		case "openai-responses":
			typ = "error"
			ev = map[string]any{"type": typ, "sequence_number": 0, "message": msg}
		case "openai-responses-nested": // the error object, its code quoting the key too
			typ = "error"
			ev = map[string]any{"type": typ, "sequence_number": 0, "error": map[string]any{"code": key, "message": msg}}
		case "gemini-after-last-event": // Google's error object after the last event, not as one
			b, _ := json.MarshalIndent(map[string]any{"error": map[string]any{"code": 400, "status": "INVALID_ARGUMENT", "message": msg}}, "", "  ")
			return []Step{{Data: `{"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"STOP"}]}`}, {Raw: string(b) + "\n\n"}}
		default: // openai-responses-failed
			typ = "response.failed"
			ev = map[string]any{"type": typ, "sequence_number": 0, "response": map[string]any{"id": "resp_echo", "error": map[string]string{"message": msg}}}
		}
		b, _ := json.Marshal(ev)
		return []Step{{Event: typ, Data: string(b)}}
	}
}
