package jobs

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/probe"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// parse loads a config with probe's names, the secrets of m.
func parse(t *testing.T, text string, m map[string]string) *config.Config {
	t.Helper()
	c, err := config.Parse("j.toml", []byte(text), Env(env(m)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Build makes one job per target and sample, and per target and drill,
// named target/sample and target/drill, each with its sample, its drill
// and the target's settings, one client per target, and the config's
// origin.
func TestBuildExpandsTargetsSamplesDrills(t *testing.T) {
	c := parse(t, `region = "eu"
host = "h1"
[labels]
team = "search"
[[target]]
name = "a"
url = "http://127.0.0.1:1/v1"
samples = ["long", "short"]
drills = ["drop", "stale"]
drop_after = 4
rewind = 2
ids = "opaque"
stale_id = "old-1"
error_event = "oops"
reset_event = "lost"
stale_headers = ["X-History: lost", "X-Resumed-From"]
max_reconnects = 7
[[target]]
name = "b"
url = "http://127.0.0.1:2/v1"
`, nil)
	js, err := Build(c, "", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range js {
		names = append(names, j.Name)
	}
	if want := []string{"a/long", "a/short", "a/drop", "a/stale", "b/short", "b/long", "b/cancel"}; !slices.Equal(names, want) {
		t.Fatalf("jobs %v, want %v", names, want)
	}
	want := probe.Drill{DropAfter: 4, Rewind: 2, StaleID: "old-1", OpaqueIDs: true, ErrorEvent: "oops", ResetEvent: "lost", MaxReconnects: 7,
		StaleHeaders: []probe.HeaderMatch{{Name: "X-History", Value: "lost"}, {Name: "X-Resumed-From"}}}
	for i, j := range js[:4] {
		d := want
		if i >= 2 {
			d.Name = strings.TrimPrefix(j.Name, "a/")
		}
		if !reflect.DeepEqual(j.Drill, d) {
			t.Errorf("%s: drill %+v, want %+v", j.Name, j.Drill, d)
		}
		wantSample := strings.TrimPrefix(j.Name, "a/")
		if i >= 2 {
			wantSample = "long" // a drill streams the long sample
		}
		if j.Sample.Name != wantSample || j.Target.URL != "http://127.0.0.1:1/v1" || j.Client != js[0].Client {
			t.Errorf("%s: sample %s, url %s, own client %v", j.Name, j.Sample.Name, j.Target.URL, j.Client != js[0].Client)
		}
	}
	if js[4].Client == js[0].Client || js[4].Client != js[6].Client {
		t.Error("clients are not one per target")
	}
	if o := js[5].Origin; o.Host != "h1" || o.Region != "eu" || o.Labels["team"] != "search" {
		t.Errorf("origin %+v", o)
	}
	if d := js[4].Drill; d.Name != "" || d.DropAfter != 0 || d.OpaqueIDs {
		t.Errorf("b's settings are a's: %+v", d)
	}
}

// Secrets are resolved when the jobs are built: a bearer key from the
// environment or a file (as x-api-key for anthropic-messages,
// x-goog-api-key for gemini), header_env
// values; one that has gone missing since the config loaded is an error
// naming the target.
func TestBuildResolvesSecrets(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("sk-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text := `[[target]]
name = "env"
url = "http://127.0.0.1:1/v1"
bearer_env = "KEY"
[target.header_env]
X-Tenant = "TENANT"
[target.headers]
X-Plain = "p"
[[target]]
name = "file"
url = "http://127.0.0.1:1/v1"
bearer_file = "` + keyFile + `"
[[target]]
name = "ant"
url = "http://127.0.0.1:1/v1"
dialect = "anthropic-messages"
bearer_env = "KEY"
[[target]]
name = "gem"
url = "http://127.0.0.1:1"
dialect = "gemini"
model = "m"
bearer_file = "` + keyFile + `"
`
	secrets := map[string]string{"KEY": "sk-env", "TENANT": "t-1"}
	c := parse(t, text, secrets)
	js, err := Build(c, "", env(secrets))
	if err != nil {
		t.Fatal(err)
	}
	byTarget := map[string]dialect.Target{}
	for _, j := range js {
		// A bearer_file's key is read as each run starts.
		tg, err := j.WithToken(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		byTarget[j.Target.Name] = tg
		if j.Conf.BearerFile != "" && (j.Target.Header.Get("Authorization") != "" || j.Target.Header.Get("X-Goog-Api-Key") != "") {
			t.Errorf("%s: a bearer_file's key is in the header built once: %v", j.Name, j.Target.Header)
		}
	}
	if h := byTarget["env"].Header; h.Get("Authorization") != "Bearer sk-env" || h.Get("X-Tenant") != "t-1" || h.Get("X-Plain") != "p" {
		t.Errorf("env target headers %v", h)
	}
	if h := byTarget["file"].Header; h.Get("Authorization") != "Bearer sk-file" {
		t.Errorf("file target headers %v", h)
	}
	if h := byTarget["ant"].Header; h.Get("X-Api-Key") != "sk-env" || h.Get("Authorization") != "" {
		t.Errorf("anthropic headers %v", h)
	}
	if h := byTarget["gem"].Header; h.Get("X-Goog-Api-Key") != "sk-file" || h.Get("Authorization") != "" {
		t.Errorf("gemini headers %v", h)
	}
	for _, tt := range []struct {
		secrets map[string]string
		want    string
	}{
		{map[string]string{"TENANT": "t-1"}, "target env: environment variable KEY is not set"},
		{map[string]string{"KEY": "sk-env"}, "target env: environment variable TENANT is not set"},
	} {
		if _, err := Build(c, "", env(tt.secrets)); err == nil || err.Error() != tt.want {
			t.Errorf("got %v, want %s", err, tt.want)
		}
	}
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(c, "", env(secrets)); err == nil || !strings.HasPrefix(err.Error(), "target file: cannot read "+keyFile) {
		t.Errorf("a key file gone: %v", err)
	}
}

// A built-in target's URL is the reference target's, per dialect: sse
// reads the drill stream on /events, the API dialects their API paths.
// The generic dialect ends at data [DONE] unless end_data says
// otherwise; once's body and drill sample reach the job.
func TestBuildTargetSettings(t *testing.T) {
	c := parse(t, `[[target]]
name = "ref-sse"
builtin = true
[[target]]
name = "ref-chat"
builtin = true
dialect = "openai-chat"
[[target]]
name = "plain"
url = "http://127.0.0.1:1/events"
end_data = ""
cancel_after = 2
`, nil)
	c.Targets[1].Body = []byte(`{"x":1}`)
	c.Targets[1].Drills, c.Targets[1].DrillSample = []string{"drop"}, "short"
	if !builtin.Needed(c) {
		t.Error("NeedsBuiltin: false")
	}
	js, err := Build(c, "http://127.0.0.1:9/", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Job{}
	for _, j := range js {
		got[j.Name] = j
	}
	if u := got["ref-sse/short"].Target.URL; u != "http://127.0.0.1:9/events" {
		t.Errorf("sse builtin URL %s", u)
	}
	if u := got["ref-chat/short"].Target.URL; u != "http://127.0.0.1:9/" {
		t.Errorf("openai-chat builtin URL %s", u)
	}
	if e := got["ref-sse/short"].Target.EndData; e != "[DONE]" {
		t.Errorf("default end_data %q", e)
	}
	if e := got["plain/short"].Target.EndData; e != "" {
		t.Errorf("end_data = \"\" gave %q", e)
	}
	if j := got["ref-chat/drop"]; string(j.Target.Body) != `{"x":1}` || j.Sample.Name != "short" || j.Drill.Name != "drop" {
		t.Errorf("body %q, drill sample %s, drill %q", j.Target.Body, j.Sample.Name, j.Drill.Name)
	}
	if got["plain/short"].Conf.CancelAfter != 2 || builtin.Needed(parse(t, "[[target]]\nname = \"x\"\nurl = \"http://x\"\n", nil)) {
		t.Error("cancel_after lost, or NeedsBuiltin without a built-in target")
	}
}

// A built-in target's slowdown reaches the application servers too: the
// LangGraph API's URL and a resumable AI SDK route's carry the /slow/F
// prefix, as every other dialect's do.
func TestBuildBuiltinSlowdownOfTheApps(t *testing.T) {
	c := parse(t, `[[target]]
name = "lg"
builtin = true
dialect = "langgraph"
slowdown = 1.5
[[target]]
name = "ra"
builtin = true
dialect = "ai-sdk-ui"
resumable = true
slowdown = 1.5
[[target]]
name = "ra-plain"
builtin = true
dialect = "ai-sdk-ui"
resumable = true
`, nil)
	js, err := Build(c, "http://127.0.0.1:9/", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, j := range js {
		got[j.Name] = j.Target.URL
	}
	for name, want := range map[string]string{
		"lg/short":       "http://127.0.0.1:9/slow/1.5/langgraph",
		"ra/short":       "http://127.0.0.1:9/slow/1.5/resumable/correct/api/chat",
		"ra-plain/short": "http://127.0.0.1:9/resumable/correct/api/chat",
	} {
		if got[name] != want {
			t.Errorf("%s: URL %q, want %q", name, got[name], want)
		}
	}
}

// The deadline of a job run at t: its next due time (interval, or the
// cron expression's next activation; drill_every for a drill) plus
// jitter, max_stream and DeadlineGrace.
func TestJobDeadline(t *testing.T) {
	c := parse(t, `[[target]]
name = "i"
url = "http://x"
samples = ["short"]
drills = ["drop"]
every = "1m"
drill_every = "10m"
jitter = "5s"
max_stream = "2m"
[[target]]
name = "c"
url = "http://x"
samples = ["short"]
every = "*/15 * * * *"
jitter = "0s"
max_stream = "30s"
`, nil)
	js, err := Build(c, "", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 10, 7, 0, 0, time.UTC)
	for _, tt := range []struct {
		job  Job
		want time.Time
	}{
		{js[0], at.Add(time.Minute + 5*time.Second + 2*time.Minute + DeadlineGrace)},
		{js[1], at.Add(10*time.Minute + 5*time.Second + 2*time.Minute + DeadlineGrace)},
		{js[2], time.Date(2026, 12, 3, 10, 15, 0, 0, time.UTC).Add(30*time.Second + DeadlineGrace)},
	} {
		if got := tt.job.Deadline(at); !got.Equal(tt.want) {
			t.Errorf("%s: deadline %s, want %s", tt.job.Name, got, tt.want)
		}
	}
}

// Job.Run bounds the whole request by max_stream and the first chunk by
// timeout, against a real server that holds the stream open; the
// record is stamped with the config's origin, and the cancel sample
// reads cancel_after chunks.
func TestJobRunIsBounded(t *testing.T) {
	slow := refserver.NewUnstarted(refserver.Events(refserver.Ms(10), -1))
	slow.Hold = true
	slow.Start()
	defer slow.Close()
	silent := refserver.NewUnstarted(nil)
	silent.Hold = true
	silent.Start()
	defer silent.Close()
	flowing := refserver.NewServer(refserver.Events(refserver.Ms(10, 20, 30, 40, 50), 60*time.Millisecond))
	defer flowing.Close()
	c := parse(t, `region = "eu"
[[target]]
name = "slow"
url = "`+slow.URL+`"
samples = ["short"]
timeout = "300ms"
max_stream = "400ms"
[[target]]
name = "silent"
url = "`+silent.URL+`"
samples = ["short"]
timeout = "200ms"
max_stream = "30s"
[[target]]
name = "flowing"
url = "`+flowing.URL+`"
samples = ["cancel"]
cancel_after = 2
`, nil)
	js, err := Build(c, "", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"timeout: no end marker within 400ms", "timeout: no first chunk within 200ms", "cancelled by the cancel sample after 2 content chunks"} {
		j := js[i]
		start := time.Now()
		res := j.Run(context.Background(), nil)
		j.Client.HTTP.CloseIdleConnections()
		r := res.Record
		if !strings.Contains(r.Error, want) || r.Region != "eu" {
			t.Errorf("%s: outcome %s, error %q, region %q; want %q", j.Name, r.Outcome, r.Error, r.Region, want)
		}
		if i == 0 && time.Since(start) < 400*time.Millisecond {
			t.Errorf("%s: ended after %s, before max_stream", j.Name, time.Since(start))
		}
	}
}

// Env gives config probe's registry: a name probe knows loads, another
// is refused with probe's list.
func TestEnvNamesAreProbes(t *testing.T) {
	names := Env(nil).Names
	if !slices.Equal(names.Dialects, dialect.Names()) || !slices.Equal(names.Samples, dialect.SampleNames) || !slices.Equal(names.Drills, probe.DrillNames) {
		t.Errorf("names %+v", names)
	}
	_, err := config.Parse("j.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\ndialect = \"grpc\"\ndrills = [\"replay\"]\n"), Env(nil))
	for _, want := range []string{
		`j.toml:4: target[0].dialect: unknown dialect "grpc" (known: ` + strings.Join(dialect.Names(), ", ") + ")",
		`j.toml:5: target[0].drills: drills[0]: unknown drill "replay" (known: ` + strings.Join(probe.DrillNames, ", ") + ")",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

// A target whose request its dialect cannot build (a Gemini target with
// no model, a model with "/", a URL whose query does not parse) is refused
// when the config is built, named by file:line:key, as validate shows it:
// never a protocol_error blamed on the server at every run.
func TestBuildRefusesATargetItsDialectCannotRequest(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{"url = \"https://g.example\"", `g.toml:1: target[0].model: gemini: no model: the model is part of the URL (set model, or a URL ending in :streamGenerateContent)`},
		{"url = \"https://g.example\"\nmodel = \"a/b\"", `g.toml:5: target[0].model: gemini: model "a/b" holds a character a URL path segment cannot take as is`},
		{"url = \"https://g.example/v1beta/models/m:streamGenerateContent?a=%zz\"", `g.toml:4: target[0].url: gemini: the URL's query does not parse`},
	} {
		cfg, err := config.Parse("g.toml", []byte("[[target]]\nname = \"g\"\ndialect = \"gemini\"\n"+tt.body+"\n"), Env(nil))
		if err != nil {
			t.Fatalf("%s: %v", tt.body, err)
		}
		_, err = Build(cfg, "", nil)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.body, err, tt.want)
		}
	}
}

// The new target kinds are refused at file:line:key when their request
// cannot be built (a Vertex AI URL with no location, a Bedrock or Vertex
// target with no model) or when a drill asks for a resume their stream
// cannot give (text and bedrock carry no event ids), as validate shows it.
func TestNewTargetKindsRefusedAtTheirKey(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{"dialect = \"vertex-gemini\"\nurl = \"https://aiplatform.googleapis.com\"\nmodel = \"m\"",
			`k.toml:4: target[0].url: vertex-gemini: the URL names no location: want https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}`},
		{"dialect = \"vertex-anthropic\"\nurl = \"https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5\"",
			`k.toml:1: target[0].model: vertex-anthropic: no model: the model is part of the URL (set model, or a URL ending in :streamRawPredict)`},
		{"dialect = \"bedrock\"\nurl = \"https://bedrock-runtime.us-east-1.amazonaws.com\"",
			`k.toml:1: target[0].model: bedrock: no model: the model id is part of the URL (set model, or a URL ending in /model/{id}/converse-stream or /invoke-with-response-stream)`},
	} {
		cfg, err := config.Parse("k.toml", []byte("[[target]]\nname = \"k\"\n"+tt.body+"\n"), Env(nil))
		if err != nil {
			t.Fatalf("%s: %v", tt.body, err)
		}
		if _, err = Build(cfg, "", nil); err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.body, err, tt.want)
		}
	}
	for _, d := range []string{"text", "bedrock"} {
		_, err := config.Parse("d.toml", []byte("[[target]]\nname = \"d\"\nurl = \"https://bedrock-runtime.us-east-1.amazonaws.com/app\"\nmodel = \"m\"\ndialect = \""+d+"\"\ndrills = [\"drop\"]\n"), Env(nil))
		want := "d.toml:6: target[0].drills: the " + d + " dialect's stream carries no event ids (it is not Server-Sent Events): no drill can run on it"
		if err == nil || err.Error() != want {
			t.Errorf("%s with a drill:\n got %v\nwant %s", d, err, want)
		}
	}
}
