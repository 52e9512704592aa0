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
var EchoKeyDialects = []string{"openai-chat", "anthropic-messages", "openai-responses", "openai-responses-failed"}

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
		default: // openai-responses-failed
			typ = "response.failed"
			ev = map[string]any{"type": typ, "sequence_number": 0, "response": map[string]any{"id": "resp_echo", "error": map[string]string{"message": msg}}}
		}
		b, _ := json.Marshal(ev)
		return []Step{{Event: typ, Data: string(b)}}
	}
}
