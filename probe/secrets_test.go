package probe

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/leak"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

const echoedKey = "sk-echoed-0123456789abcdefghijklmnopqrst"

// echoTarget is a target of the dialect the echo server plays, with the key
// where that dialect sends it.
func echoTarget(echo, url string) dialect.Target {
	name := strings.TrimSuffix(echo, "-failed")
	h := http.Header{}
	if name == "anthropic-messages" {
		h.Set("X-Api-Key", echoedKey)
	} else {
		h.Set("Authorization", "Bearer "+echoedKey)
	}
	return dialect.Target{Name: "echo", URL: url, Dialect: name, Header: h}
}

// A provider's error message inside the stream that quotes the API key, at
// every offset around the cut of the message, leaves no piece of the key
// in the record: the key is redacted before the message is bounded.
func TestInStreamErrorNeverShowsTheKey(t *testing.T) {
	t.Parallel()
	for _, echo := range refserver.EchoKeyDialects {
		t.Run(echo, func(t *testing.T) {
			t.Parallel()
			srv := reftest.Serve(t, &refserver.Server{ScheduleFor: refserver.EchoKey(echo)})
			for pad := dialect.MaxMessage - len(echoedKey) - 8; pad <= dialect.MaxMessage+2; pad++ {
				tg := echoTarget(echo, fmt.Sprintf("%s/v1?pad=%d", srv.URL, pad))
				rec := runProbe(t, tg, "short", reftest.RunDeadline).Record
				if rec.Outcome != UpstreamError || !strings.Contains(rec.Error, "error event in the stream") {
					t.Fatalf("pad %d: outcome %s, error %q: the server did not answer as planned", pad, rec.Outcome, rec.Error)
				}
				b, _ := json.Marshal(rec)
				if p := leak.Prefix(string(b), echoedKey); p != "" {
					t.Fatalf("pad %d: the record shows %q: %s", pad, p, b)
				}
				if pad < dialect.MaxMessage-len(echoedKey)-len(" is") && !strings.Contains(rec.Error, "[redacted]") {
					t.Fatalf("pad %d: no [redacted] in %q", pad, rec.Error)
				}
			}
		})
	}
}
