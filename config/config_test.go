package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testNames stand for probe's registry, which internal/jobs passes (its
// tests load these files with the real one).
var testNames = Names{
	Dialects: []string{"anthropic-messages", "bedrock", "openai-chat", "openai-responses", "sse"},
	Signed:   []string{"bedrock"},
	Samples:  []string{"short", "long", "cancel"},
	Drills:   []string{"drop", "duplicate", "stale"},
}

func env(m map[string]string) Env {
	return Env{Names: testNames, Getenv: func(k string) string { return m[k] }}
}

func TestExampleValidates(t *testing.T) {
	e := env(nil)
	e.Names.Dialects = append(slices.Clone(e.Names.Dialects), "mcp")
	e.Names.MCPVersions = []string{"2026-07-28", "2025-11-25"}
	c, err := Load("../probe.example.toml", e)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Targets) != 3 || c.Targets[0].Name != "reference-chat" || !c.Targets[0].Builtin ||
		c.Targets[2].Dialect != "mcp" || c.Targets[2].Tool["long"].Name != "progress" {
		t.Fatalf("targets %+v", c.Targets)
	}
	if c.Targets[1].Every.Every != time.Minute || c.Targets[1].Jitter.Duration != 5*time.Second {
		t.Errorf("defaults: every %v jitter %v", c.Targets[1].Every, c.Targets[1].Jitter)
	}
	if c.Budgets["short"].TFC.Duration != 600*time.Millisecond {
		t.Errorf("budget %+v", c.Budgets)
	}
	if c.Push.Histograms != "prometheus" || c.Push.Interval.Duration != 15*time.Second || c.Listen != "127.0.0.1:9464" {
		t.Errorf("push %+v listen %q", c.Push, c.Listen)
	}
}

// Each testdata/bad-*.toml must fail with exactly the message on its first
// line, after "# want: ".
func TestBadConfigs(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad-*.toml")
	if len(files) < 6 {
		t.Fatalf("only %d bad configs", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(b), "\n")
			want, ok := strings.CutPrefix(first, "# want: ")
			if !ok {
				t.Fatalf("%s: first line must be '# want: <message>'", f)
			}
			_, err = Load(f, env(map[string]string{"SET_KEY": "x"}))
			if err == nil {
				t.Fatalf("loaded without error, want %q", want)
			}
			if err.Error() != want {
				t.Errorf("error\n  %s\nwant\n  %s", err, want)
			}
			if !errors.Is(err, ErrInvalid) && !strings.Contains(err.Error(), "no such file") {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
		})
	}
}

func TestSecretFromFile(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	os.WriteFile(key, []byte("sk-from-file\n"), 0o600)
	v, err := Secret("", key, env(nil).Getenv)
	if err != nil || v != "sk-from-file" {
		t.Errorf("Secret = %q, %v", v, err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	if _, err := Secret("", empty, env(nil).Getenv); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty file: %v", err)
	}
}

func TestCronSchedule(t *testing.T) {
	c, err := Parse("x.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\nevery = \"*/5 * * * *\"\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Targets[0].Every.Cron != "*/5 * * * *" {
		t.Errorf("every %+v", c.Targets[0].Every)
	}
}

// validate reports every problem it finds, one line each, in file order
// within a section; each is an *Error and wraps ErrInvalid.
func TestValidateReportsEveryProblem(t *testing.T) {
	_, err := Parse("p.toml", []byte(`log.level = "loud"
[[target]]
name = "a b"
url = "http://x"
dialect = "grpc"
[[target]]
name = "c"
builtin = true
samples = ["huge"]
[budget.tiny]
`), env(nil))
	want := []string{
		`p.toml:1: log.level: "loud": want debug, info, warn or error`,
		`p.toml:3: target[0].name: "a b": use letters, digits, '.', '_' and '-' (it becomes a label value)`,
		`p.toml:5: target[0].dialect: unknown dialect "grpc" (known: anthropic-messages, bedrock, openai-chat, openai-responses, sse)`,
		`p.toml:9: target[1].samples: samples[0]: unknown sample "huge" (known: short, long, cancel)`,
		`p.toml:10: budget.tiny: unknown sample "tiny" (known: short, long, cancel)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("got\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
	var e *Error
	if !errors.Is(err, ErrInvalid) || !errors.As(err, &e) {
		t.Errorf("the joined error is not an *Error wrapping ErrInvalid: %#v", err)
	}
}

// A value of the wrong type names what was found and what belongs, never
// a Go type.
func TestWrongTypeNamesNoGoType(t *testing.T) {
	for value, want := range map[string]string{
		`samples = "short"`:      "target[0].samples: a string where a list of strings belongs",
		`max_event_size = 1.5`:   "target[0].max_event_size: a number where an integer belongs",
		`builtin = "yes"`:        "target[0].builtin: a string where true or false belongs",
		`max_reconnects = true`:  "target[0].max_reconnects: true or false where an integer belongs",
		`samples = ["short", 3]`: "target[0].samples: an integer where a string belongs",
		`headers = {X-A = 1}`:    "target[0].headers: an integer where a string belongs",
		`stale_headers = "x"`:    "target[0].stale_headers: a string where a list of strings belongs",
		`drop_at = "soon"`:       `target[0].drop_at: "soon" is not a duration (want e.g. "30s", "1m")`,
		`resume_on_drop = 1`:     "target[0].resume_on_drop: an integer where true or false belongs",
		`inline_think = "off"`:   "target[0].inline_think: a string where true or false belongs",
	} {
		_, err := Parse("p.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\n"+value+"\n"), env(nil))
		if err == nil || err.Error() != "p.toml:4: "+want {
			t.Errorf("%s: got %v, want %s", value, err, want)
		}
	}
}

// inline_think is on unless a target says false.
func TestInlineThink(t *testing.T) {
	c, err := Parse("p.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\n[[target]]\nname = \"b\"\nurl = \"http://x\"\ninline_think = false\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Targets[0].InlineThink != nil || c.Targets[1].InlineThink == nil || *c.Targets[1].InlineThink {
		t.Errorf("inline_think: %v, %v", c.Targets[0].InlineThink, c.Targets[1].InlineThink)
	}
}

// A secret from the environment or a file with a byte no header may carry
// (a CR/LF pasted in) is refused at load time with its key, never quoted:
// every run would fail with it.
func TestSecretsWithControlBytesRefused(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	os.WriteFile(keyFile, []byte("sk-first-line\r\nsk-second-line\n"), 0o600)
	cfg := filepath.Join(dir, "c.toml")
	os.WriteFile(cfg, []byte(`[push]
url = "http://127.0.0.1:8428/api/v1/import/prometheus"
authorization_env = "PUSH_AUTH"

[[target]]
name = "a"
url = "http://127.0.0.1:1/v1"
bearer_file = "`+keyFile+`"

[[target]]
name = "b"
url = "http://127.0.0.1:1/v1"
bearer_env = "B_KEY"
[target.header_env]
X-Api-Key = "B_HDR"
`), 0o600)
	_, err := Load(cfg, env(map[string]string{"PUSH_AUTH": "Bearer p\nq", "B_KEY": "sk-b\x00", "B_HDR": "h\r"}))
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		":3: push.authorization_env: the value of PUSH_AUTH holds the byte 0x0a",
		":8: target[0].bearer_file: the content of " + keyFile + " holds the byte 0x0d",
		":13: target[1].bearer_env: the value of B_KEY holds the byte 0x00",
		":15: target[1].header_env.X-Api-Key: the value of B_HDR holds the byte 0x0d",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	for _, secret := range []string{"sk-first", "sk-second", "sk-b"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error quotes the secret %q", secret)
		}
	}
}

// A bad max_chunks hides no other error of its target (it used to return
// at once, masking an inline secret and a missing bearer_file).
func TestEveryErrorOfATargetIsReported(t *testing.T) {
	_, err := Parse("p.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\nmax_chunks = -1\nbearer_file = \"/nonexistent/key\"\n[target.headers]\nAuthorization = \"Bearer x\"\n"), env(nil))
	for _, want := range []string{"p.toml:4: target[0].max_chunks", "p.toml:5: target[0].bearer_file", "p.toml:7: target[0].headers.Authorization"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

// A table value in [target.headers] that is not a string names its key.
func TestHeaderTableValueType(t *testing.T) {
	_, err := Parse("p.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\n[target.headers]\nX-A = 1\n"), env(nil))
	if err == nil || err.Error() != "p.toml:5: target[0].headers.X-A: an integer where a string belongs" {
		t.Errorf("got %v", err)
	}
}

// Each rule of a target reports its own problem: no group of checks
// returns early and hides the next (the bug of max_chunks, for every
// group: identity, names, timing, limits, drill, headers and secrets).
func TestEveryRuleOfATargetIsReported(t *testing.T) {
	_, err := Parse("p.toml", []byte(`[[target]]
name = "a b"
url = "http://x"
dialect = "grpc"
every = "10s"
timeout = "20s"
max_chunks = 0
max_reconnects = 101
stale_headers = ["Bad Name"]
bearer_env = "UNSET_KEY"
[target.headers]
Cookie = "c"
`), env(nil))
	for _, want := range []string{
		`p.toml:2: target[0].name: "a b": use letters`,
		`p.toml:4: target[0].dialect: unknown dialect "grpc"`,
		`p.toml:6: target[0].timeout: timeout (20s) must be shorter than every (10s)`,
		`p.toml:7: target[0].max_chunks: 0: want 1 to 10000000`,
		`p.toml:8: target[0].max_reconnects: 101: want 1 to 100`,
		`p.toml:9: target[0].stale_headers: stale_headers[0]: "Bad Name": want 'Name' or 'Name: value'`,
		`p.toml:10: target[0].bearer_env: environment variable UNSET_KEY is not set`,
		`p.toml:12: target[0].headers.Cookie: secrets may not be inline: use bearer_env, bearer_file or header_env`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

// A key written must hold a value of its range; left out, it takes its
// default (0 for the probe's own). One range for a file and for once.
func TestRangesOfWrittenKeys(t *testing.T) {
	parse := func(extra string) error {
		_, err := Parse("p.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\n"+extra), env(nil))
		return err
	}
	c, err := Parse("p.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if tg := c.Targets[0]; tg.MaxReconnects != 0 || tg.MaxChunks != 0 || tg.MaxEventSize != 0 || tg.CancelAfter != 0 || tg.MaxStream.Duration != DefaultMaxStream {
		t.Errorf("defaults %+v", tg)
	}
	for extra, want := range map[string]string{
		"max_reconnects = 0":                "p.toml:4: target[0].max_reconnects: 0: want 1 to 100",
		"max_reconnects = 100":              "",
		"max_chunks = 10000001":             "p.toml:4: target[0].max_chunks: 10000001: want 1 to 10000000",
		"max_event_size = 0":                "p.toml:4: target[0].max_event_size: 0: want 1 to 1073741824 bytes",
		"cancel_after = 0":                  "p.toml:4: target[0].cancel_after: 0: want 1 or more",
		"cancel_after = 7":                  "",
		"drop_after = -1":                   "p.toml:4: target[0].drop_after: -1: want 1 or more",
		"rewind = 0":                        "p.toml:4: target[0].rewind: 0: want 1 or more",
		`max_stream = "0s"`:                 "p.toml:4: target[0].max_stream: 0s: want a positive duration",
		`away = "-1s"`:                      `p.toml:4: target[0].away: "-1s" is negative`,
		`away = "10m"`:                      "p.toml:4: target[0].away: away (10m0s) must be shorter than max_stream (5m0s)",
		`away = "5s"`:                       "",
		"max_chunks = 99999999999999999999": "p.toml:4: target[0].max_chunks: 99999999999999999999 does not fit in a 64-bit integer",
	} {
		err := parse(extra)
		if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != want)) {
			t.Errorf("%s: got %v, want %q", extra, err, want)
		}
	}
}

// With no getenv (report, which sends no request) no secret is looked
// up, neither variable nor file; what the file itself says wrong still
// is an error.
func TestNoSecretLookedUpWithoutGetenv(t *testing.T) {
	text := `[push]
url = "http://127.0.0.1:1/api/v1/import/prometheus"
authorization_file = "/nonexistent/push-auth"
[[target]]
name = "a"
url = "http://x"
bearer_file = "/nonexistent/key"
[target.header_env]
X-Tenant = "UNSET_TENANT"
`
	noSecrets := Env{Names: testNames}
	if _, err := Parse("p.toml", []byte(text), noSecrets); err != nil {
		t.Errorf("without getenv: %v", err)
	}
	if _, err := Parse("p.toml", []byte(text), env(nil)); err == nil || !strings.Contains(err.Error(), "p.toml:7: target[0].bearer_file: cannot read /nonexistent/key") {
		t.Errorf("with getenv: %v", err)
	}
	_, err := Parse("p.toml", []byte(strings.Replace(text, "[target.header_env]", "bearer_env = \"K\"\n[target.header_env]", 1)), noSecrets)
	if err == nil || err.Error() != "p.toml:7: target[0].bearer_file: set bearer_env or bearer_file, not both" {
		t.Errorf("both set, without getenv: %v", err)
	}
}

// A syntax error is the parser's own message at its line, read from its
// type, not from the decoder's text; other decoder errors keep their
// words and give their line and key.
func TestDecoderErrorsFromTheirTypes(t *testing.T) {
	for text, want := range map[string]string{
		"region = \"eu\n":                  "p.toml:1: basic strings cannot have new lines",
		"region = \"a\"\nregion = \"b\"\n": "p.toml:2: region: toml: key region is already defined",
	} {
		_, err := Parse("p.toml", []byte(text), env(nil))
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", text, err, want)
		}
	}
}

// A config given by flags (once) is checked by the same rules, and each
// error names the flag: its value, or a message that names the flags it
// is about. The target's name is free text (the URL's host:port).
func TestFromFlagsNamesTheFlag(t *testing.T) {
	flags := map[string]string{"labels": "-label", "target[0].url": "-url", "target[0].builtin": "-builtin",
		"target[0].max_reconnects": "-max-reconnects", "target[0].max_stream": "-timeout", "target[0].drop_at": "-drop-at", "target[0].away": "-away",
		"target[0].headers": "-header", "target[0].bearer_env": "-bearer-env", "target[0].header_env": "-header-env", "target[0].samples": "-sample", "target[0].ids": "-ids"}
	base := Target{Name: "127.0.0.1:8080", Dialect: "sse", Samples: []string{"short"}, IDs: "int", MaxStream: Duration{time.Minute}, MaxReconnects: 5}
	var u URL
	if err := u.UnmarshalText([]byte("http://127.0.0.1:8080/v1")); err != nil {
		t.Fatal(err)
	}
	ok := base
	ok.URL = u
	c, err := FromFlags(Config{Targets: []Target{ok}}, flags, env(nil))
	if err != nil || c.File() != "" || c.Log.Level != "info" || c.Targets[0].Timeout.Duration != 0 {
		t.Fatalf("a good config: %v %+v", err, c)
	}
	for _, tt := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Targets[0].URL = URL{} }, "-url is required (or -builtin for the built-in reference target)"},
		{func(c *Config) { c.Targets[0].Builtin = true }, "set -url or -builtin, not both"},
		{func(c *Config) { c.Targets[0].MaxReconnects = 0 }, "-max-reconnects 0: want 1 to 100"},
		{func(c *Config) { c.Targets[0].DropAt = Duration{2 * time.Minute} }, "-drop-at (2m0s) must be shorter than -timeout (1m0s)"},
		{func(c *Config) { c.Targets[0].Away = Duration{2 * time.Minute} }, "-away (2m0s) must be shorter than -timeout (1m0s)"},
		{func(c *Config) { c.Targets[0].Headers = map[string]string{"X-Api-Key": "k"} }, "-header X-Api-Key: secrets may not be given on the command line: use -bearer-env or -header-env"},
		{func(c *Config) { c.Targets[0].Samples = []string{"huge"} }, `-sample: unknown sample "huge" (known: short, long, cancel)`},
		{func(c *Config) { c.Targets[0].IDs = "uuid" }, `-ids "uuid": want int or opaque`},
		{func(c *Config) { c.Labels = map[string]string{"9x": "y"} }, `-label 9x: "9x" is not a usable label name`},
	} {
		c := Config{Targets: []Target{ok}}
		tt.edit(&c)
		_, err := FromFlags(c, flags, env(nil))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v, want %s", err, tt.want)
		}
	}
}

// A dialect whose stream carries no event ids (probe's registry says
// which) refuses drills at load time, naming the key; its samples load.
func TestDrillsRefusedWithoutEventIDs(t *testing.T) {
	names := testNames
	names.Dialects = append([]string{"lines"}, names.Dialects...)
	names.NoEventIDs = []string{"lines"}
	e := Env{Names: names, Getenv: func(string) string { return "" }}
	_, err := Parse("p.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\ndialect = \"lines\"\ndrills = [\"drop\"]\n"), e)
	want := `p.toml:5: target[0].drills: the lines dialect's stream carries no event ids (it is not Server-Sent Events): no drill can run on it`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if _, err := Parse("p.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\ndialect = \"lines\"\nsamples = [\"short\"]\n"), e); err != nil {
		t.Fatal(err)
	}
}

// The mcp dialect's tool calls: by a known sample, arguments a JSON
// object, on an mcp target only; each problem one line with its key.
func TestToolCalls(t *testing.T) {
	e := env(nil)
	e.Names.Dialects = append(slices.Clone(e.Names.Dialects), "mcp")
	good := "[[target]]\nname = \"a\"\nurl = \"http://x/mcp\"\ndialect = \"mcp\"\n[target.tool.long]\nname = \"search\"\nargs = '{\"q\":1}'\n"
	c, err := Parse("p.toml", []byte(good), e)
	if err != nil || c.Targets[0].Tool["long"] != (ToolCall{Name: "search", Args: `{"q":1}`}) {
		t.Fatalf("%v %+v", err, c)
	}
	bad := "[[target]]\nname = \"a\"\nurl = \"http://x/mcp\"\ndialect = \"mcp\"\n[target.tool.huge]\nname = \"x\"\n[target.tool.short]\nargs = '[1]'\n" +
		"[[target]]\nname = \"b\"\nurl = \"http://x/\"\ndialect = \"sse\"\n[target.tool.long]\nargs = '{'\n"
	_, err = Parse("p.toml", []byte(bad), e)
	for _, want := range []string{
		`target[0].tool.huge: unknown sample "huge"`,
		"target[0].tool.short.args: want a JSON object",
		"target[1].tool.long: tool calls are for the mcp dialect (this target's is sse)",
		"target[1].tool.long.args: not JSON",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// A written timeout = "0s" means what the docs say, no first-chunk limit
// of its own (max_stream still bounds the run); left out, the target's
// timeout is the default. It was the default either way.
func TestWrittenZeroTimeoutIsNoLimit(t *testing.T) {
	for _, tt := range []struct {
		line string
		want time.Duration
	}{
		{`timeout = "0s"`, 0},
		{``, DefaultTimeout},
		{`timeout = "2s"`, 2 * time.Second},
	} {
		c, err := Parse("t.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://x\"\n"+tt.line+"\n"), env(nil))
		if err != nil {
			t.Fatalf("%q: %v", tt.line, err)
		}
		if got := c.Targets[0].Timeout.Duration; got != tt.want {
			t.Errorf("%q: timeout %v, want %v", tt.line, got, tt.want)
		}
	}
}

// One file for a fleet: region, host, listen and labels from the host's
// environment; a variable that is not set, or a key given both ways, is an
// error naming the key.
func TestHostValuesFromEnv(t *testing.T) {
	text := "region_env = \"R\"\nhost_env = \"H\"\nlisten_env = \"L\"\n[labels]\nteam = \"probes\"\n[labels_env]\nsite = \"S\"\n[[target]]\nname = \"a\"\nurl = \"http://x\"\n"
	c, err := Parse("f.toml", []byte(text), env(map[string]string{"R": "eu-west", "H": "edge-7", "L": "127.0.0.1:9465", "S": "fra1"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Region != "eu-west" || c.Host != "edge-7" || c.Listen != "127.0.0.1:9465" || c.Labels["site"] != "fra1" || c.Labels["team"] != "probes" {
		t.Errorf("region %q host %q listen %q labels %v", c.Region, c.Host, c.Listen, c.Labels)
	}
	_, err = Parse("f.toml", []byte(text), env(map[string]string{"R": "eu-west", "S": "fra1"}))
	want := "f.toml:2: host_env: environment variable H is not set\nf.toml:3: listen_env: environment variable L is not set"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	_, err = Parse("f.toml", []byte("host = \"x\"\nhost_env = \"H\"\n[[target]]\nname = \"a\"\nurl = \"http://x\"\n"), env(map[string]string{"H": "y"}))
	if err == nil || err.Error() != "f.toml:2: host_env: set host or host_env, not both" {
		t.Errorf("both: %v", err)
	}
}

// A target's [target.budget.<sample>] overrides the global
// [budget.<sample>] key by key: a key it does not set keeps the global
// value, a sample only it names gets its own; another target keeps the
// global table. [compare.margin] overrides a metric's default margin.
func TestTargetBudgetsAndMargins(t *testing.T) {
	c, err := Parse("t.toml", []byte(`[[target]]
name = "chat"
builtin = true
[[target]]
name = "tools"
builtin = true
slowdown = 1.2
[target.budget.short]
gap = "150ms"
stall_share = 0.1
[target.budget.long]
tail = "8s"
[budget.short]
tfc = "600ms"
gap = "100ms"
tail = "2s"
[compare.margin]
tfc_p50 = 0.25
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	chat, tools := c.BudgetsFor(0), c.BudgetsFor(1)
	if chat["short"].Gap.Duration != 100*time.Millisecond || chat["short"].StallShare != nil || len(chat) != 1 {
		t.Errorf("chat's budgets %+v, want the global ones", chat)
	}
	s := tools["short"]
	if s.TFC.Duration != 600*time.Millisecond || s.Gap.Duration != 150*time.Millisecond || s.Tail.Duration != 2*time.Second || s.StallShare == nil || *s.StallShare != 0.1 {
		t.Errorf("tools' short budget %+v, want tfc and tail global, gap and stall_share its own", s)
	}
	if l := tools["long"]; l.Tail.Duration != 8*time.Second || l.TFC.Duration != 0 {
		t.Errorf("tools' long budget %+v", l)
	}
	if c.Targets[1].Slowdown != 1.2 {
		t.Errorf("slowdown %v", c.Targets[1].Slowdown)
	}
	if c.Margin("tfc_p50") != 0.25 || c.Margin("gap_p95") != 0.20 || c.Margin("stall_share") != 0.05 {
		t.Errorf("margins %v %v %v", c.Margin("tfc_p50"), c.Margin("gap_p95"), c.Margin("stall_share"))
	}
}

// The keys of the application dialects: langgraph's (assistant_id,
// input, stream_mode, stream_resumable) and a resumable ai-sdk-ui route's
// (resumable, resume_url), each on its dialect only, each value checked;
// each problem one line with file:line:key.
func TestAppKeys(t *testing.T) {
	e := env(nil)
	e.Names.Dialects = append(slices.Clone(e.Names.Dialects), "langgraph", "ai-sdk-ui")
	e.Names.StreamModes = []string{"values", "messages", "messages-tuple", "updates"}
	good := "[[target]]\nname = \"a\"\nurl = \"http://x\"\ndialect = \"langgraph\"\nassistant_id = \"agent\"\ninput = '{\"messages\":[]}'\nstream_mode = [\"messages-tuple\", \"updates\"]\nstream_resumable = false\n" +
		"[[target]]\nname = \"b\"\nurl = \"http://x/api/chat\"\ndialect = \"ai-sdk-ui\"\nresumable = true\nresume_url = \"{api}/{chatId}/stream\"\n"
	c, err := Parse("p.toml", []byte(good), e)
	if err != nil || c.Targets[0].AssistantID != "agent" || c.Targets[0].StreamResumable == nil || *c.Targets[0].StreamResumable || !c.Targets[1].Resumable {
		t.Fatalf("%v %+v", err, c)
	}
	bad := "[[target]]\nname = \"a\"\nurl = \"http://x\"\ndialect = \"langgraph\"\ninput = '[1]'\nstream_mode = [\"values\", \"bogus\"]\n" +
		"[[target]]\nname = \"b\"\nurl = \"http://x/api/chat\"\ndialect = \"ai-sdk-ui\"\nresume_url = \"{api}/{chatId}/stream\"\n" +
		"[[target]]\nname = \"c\"\nurl = \"http://x/api/chat\"\ndialect = \"ai-sdk-ui\"\nresumable = true\nresume_url = \"{api}/stream\"\n" +
		"[[target]]\nname = \"d\"\nurl = \"http://x/\"\ndialect = \"sse\"\nassistant_id = \"agent\"\nresumable = true\n" +
		"[[target]]\nname = \"e\"\nurl = \"http://x/api/chat\"\ndialect = \"ai-sdk-ui\"\nresumable = true\nresume_url = \"ftp://h/{chatId}\"\n"
	_, err = Parse("p.toml", []byte(bad), e)
	for _, want := range []string{
		"p.toml:5: target[0].input: want a JSON object ({\"name\": value, ...}), the run's input",
		`p.toml:6: target[0].stream_mode: stream_mode[1]: unknown stream mode "bogus"`,
		"p.toml:6: target[0].stream_mode: neither messages-tuple nor messages",
		"p.toml:11: target[1].resume_url: resume_url needs resumable = true",
		"p.toml:17: target[2].resume_url: \"{api}/stream\": want a URL that names the chat with {chatId}",
		"p.toml:22: target[3].assistant_id: assistant_id is for the langgraph dialect (this target's is sse)",
		"p.toml:23: target[3].resumable: resumable is for the ai-sdk-ui dialect (this target's is sse)",
		"p.toml:29: target[4].resume_url: \"ftp://h/{chatId}\": want an http(s) URL",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// push.histograms by default: le buckets when nothing is pushed (/metrics
// is scraped, by Prometheus first), vmrange with a push URL; a value
// written is kept either way.
func TestHistogramsDefaultFollowsThePush(t *testing.T) {
	const target = "[[target]]\nname = \"t\"\nurl = \"http://x\"\n"
	for _, tc := range []struct{ push, want string }{
		{"", "prometheus"},
		{"[push]\ninterval = \"30s\"\n", "prometheus"},
		{"[push]\nurl = \"http://vm:8428/api/v1/import/prometheus\"\n", "vmrange"},
		{"[push]\nhistograms = \"vmrange\"\n", "vmrange"},
		{"[push]\nurl = \"http://vm:8428/api/v1/import/prometheus\"\nhistograms = \"prometheus\"\n", "prometheus"},
	} {
		c, err := Parse("h.toml", []byte(tc.push+target), env(nil))
		if err != nil {
			t.Fatal(err)
		}
		if c.Push.Histograms != tc.want {
			t.Errorf("%q: histograms %q, want %q", tc.push, c.Push.Histograms, tc.want)
		}
	}
}
