package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/leak"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

const echoedKey = "sk-echoed-0123456789abcdefghijklmnopqrst"

// echoTarget is a target of the dialect the echo server plays, with the key
// where that dialect sends it.
func echoTarget(echo, url string) dialect.Target {
	name := refserver.EchoKeyDialect(echo)
	h := http.Header{}
	if name == "anthropic-messages" {
		h.Set("X-Api-Key", echoedKey)
	} else {
		h.Set("Authorization", "Bearer "+echoedKey)
	}
	return dialect.Target{Name: "echo", URL: url, Dialect: name, Header: h, Model: "m"}
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
				if rec.Outcome != UpstreamError || !strings.Contains(rec.Error, "error event in the stream") && !strings.Contains(rec.Error, "error object after the last event") {
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

// A key stays with its target: no redirect carries it to another host,
// and an error body that echoes it does not show it.
func TestSecretsStayHome(t *testing.T) {
	t.Parallel()
	const key = "sk-review-0123456789abcdef"
	t.Run("no redirect to another host", func(t *testing.T) {
		t.Parallel()
		hit := make(chan string, 1)
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit <- r.Header.Get("X-Api-Key") }))
		defer other.Close()
		first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
		}))
		defer first.Close()
		h := http.Header{}
		h.Set("X-Api-Key", key)
		rec := runProbe(t, dialect.Target{Name: "r", URL: first.URL, Dialect: "anthropic-messages", Header: h}, "short", 3*time.Second).Record
		select {
		case got := <-hit:
			t.Fatalf("the other host got a request (x-api-key %q)", got)
		default:
		}
		if rec.Outcome != UpstreamError || !strings.Contains(rec.Error, "redirect to another host") {
			t.Errorf("outcome %s error %q", rec.Outcome, rec.Error)
		}
	})
	t.Run("an error body that echoes the key", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			io.WriteString(w, "invalid key: "+r.Header.Get("Authorization"))
		}))
		defer srv.Close()
		h := http.Header{}
		h.Set("Authorization", "Bearer "+key)
		rec := runProbe(t, dialect.Target{Name: "r", URL: srv.URL, Dialect: "openai-chat", Header: h}, "short", 3*time.Second).Record
		if strings.Contains(rec.Error, key) || !strings.Contains(rec.Error, "[redacted]") {
			t.Errorf("error %q", rec.Error)
		}
	})
}

// A secret in a resume URL of the dialect's own (a resumable AI SDK app's
// resume_url with a token in its query) is a secret of the run: a resume
// answered with an error that echoes it leaves no piece of it in the
// record.
func TestResumeURLSecretStaysOut(t *testing.T) {
	t.Parallel()
	const token = "tok-resume-0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "no stream for "+r.URL.String())
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		io.WriteString(w, "data: {\"type\":\"start\"}\n\n")
		for i := range 6 {
			fmt.Fprintf(w, "data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"w%d\"}\n\n", i)
			rc.Flush()
			time.Sleep(20 * time.Millisecond)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	tg := dialect.Target{Name: "app", URL: srv.URL + "/api/chat", Dialect: "ai-sdk-ui", EndData: "[DONE]",
		App: &dialect.App{Resumable: true, ResumeURL: "{api}/{chatId}/stream?token=" + token}}
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	rec := Run(ctx, tg, Options{Sample: dialect.Samples["long"], Client: reftest.NewClient(t), Drill: Drill{Name: DrillDrop}}).Record
	if rec.Outcome != UpstreamError || !strings.Contains(rec.Error, "500") {
		t.Fatalf("outcome %s %q: the server did not answer as planned", rec.Outcome, rec.Error)
	}
	b, _ := json.Marshal(rec)
	if p := leak.Any(string(b), token); p != "" {
		t.Errorf("the record shows %q: %s", p, b)
	}
}
