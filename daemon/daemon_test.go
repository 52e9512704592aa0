package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"go.uber.org/goleak"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/leak"
	"github.com/streamprobe/streamprobe/internal/testenv/tools"
	"github.com/streamprobe/streamprobe/probe"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// TestMain fails the package when a goroutine outlives the tests. The
// tests' own queries use the default transport: its idle keep-alive
// connections are closed first (the push has its own, closed by Run).
func TestMain(m *testing.M) {
	code := tools.M{M: m}.Run()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		code = 1
	}
	os.Exit(code)
}

// syncBuffer is a log sink safe for the daemon's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testDaemon(t *testing.T, cfgText string, env map[string]string) (*Daemon, *syncBuffer) {
	t.Helper()
	getenv := func(k string) string { return env[k] }
	cfg, err := config.Parse("test.toml", []byte(cfgText), jobs.Env(getenv))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	d := New(cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	d.Getenv = getenv
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	d.Client = &resumeclient.Client{HTTP: &http.Client{Transport: tr}}
	return d, logs
}

// No secret value appears in any log line, record or metric: a known key
// goes to the target and to the push endpoint, both of which fail, and
// everything the daemon wrote is searched for it.
func TestSecretsNeverLeak(t *testing.T) {
	const key = "sk-streamprobe-secret-0123456789abcdef"
	const pushKey = "Bearer push-secret-0123456789abcdef"
	var sawKey bool
	var mu sync.Mutex
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sawKey = sawKey || r.Header.Get("Authorization") == "Bearer "+key
		mu.Unlock()
		http.Error(w, "bad key "+r.Header.Get("X-Request-Id"), http.StatusUnauthorized)
	}))
	defer target.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	results := filepath.Join(t.TempDir(), "results.jsonl")
	// The inputs of a fleet's daemon too: an OAuth2 client secret (its
	// token endpoint echoes it in a 401), a bearer_file token (its target
	// echoes it), the OTLP export's authorization, the run token.
	const clientSecret, fileToken = "cs-oauth-walk-0123456789abcdef", "tok-file-walk-0123456789abcdef"
	const otlpKey, runToken = "Bearer otlp-walk-0123456789abcdef", "run-walk-0123456789abcdef"
	tokenEndpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		_, secret, _ := r.BasicAuth()
		http.Error(w, `{"error":"invalid_client","error_description":"bad secret `+secret+r.PostForm.Get("client_secret")+`"}`, http.StatusUnauthorized)
	}))
	defer tokenEndpoint.Close()
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "you sent "+r.Header.Get("Authorization")+" "+r.Header.Get("X-Amz-Security-Token"), http.StatusUnauthorized)
	}))
	defer echo.Close()
	// The token kinds of the new dialects: a bearer_command's output (its
	// target echoes it), AWS credentials from the environment (a bedrock
	// target that echoes the SigV4 Authorization and the session token),
	// a service account key whose token endpoint echoes the signed
	// assertion.
	const cmdToken = "ya29.cmd-walk-0123456789abcdef"
	const awsID, awsSecret, awsToken = "AKIAWALKDAEMON000001", "aws/walk/secret/0123456789abcdef", "FwoGZXIvYXdzWalkSessionToken0123456789"
	saEndpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		http.Error(w, `{"error":"invalid_grant","error_description":"bad assertion `+r.PostForm.Get("assertion")+`"}`, http.StatusBadRequest)
	}))
	defer saEndpoint.Close()
	saKey, saKeyID := walkServiceAccount(t, saEndpoint.URL+"/token")
	dir := t.TempDir()
	secretFile, tokenFile, runFile := filepath.Join(dir, "cs"), filepath.Join(dir, "tok"), filepath.Join(dir, "run")
	os.WriteFile(secretFile, []byte(clientSecret), 0o600)
	os.WriteFile(tokenFile, []byte(fileToken), 0o600)
	os.WriteFile(runFile, []byte(runToken), 0o600)
	cmdFile := filepath.Join(dir, "print-token")
	os.WriteFile(cmdFile, []byte("#!/bin/sh\necho "+cmdToken+"\n"), 0o755)
	saFile := filepath.Join(dir, "sa.json")
	os.WriteFile(saFile, saKey, 0o600)
	addr := freeAddr(t)
	d, logs := testDaemon(t, fmt.Sprintf(`results_log = %q
listen = %q
run_token_file = %q
[push]
url = "%s/api/v1/import/prometheus"
interval = "1s"
timeout = "1s"
authorization_env = "PUSH_AUTH"
[otlp]
url = "%s/v1/metrics"
interval = "1s"
timeout = "1s"
authorization_env = "OTLP_AUTH"
[[target]]
name = "secret-target"
url = %q
dialect = "openai-chat"
bearer_env = "TEST_KEY"
samples = ["short"]
every = "300ms"
jitter = "0s"
[[target]]
name = "oauth-target"
url = %q
dialect = "openai-chat"
samples = ["short"]
every = "300ms"
jitter = "0s"
[target.oauth2]
token_url = "%s/token"
client_id = "probe"
client_secret_file = %q
[[target]]
name = "file-target"
url = %q
dialect = "openai-chat"
bearer_file = %q
samples = ["short"]
every = "300ms"
jitter = "0s"
[[target]]
name = "command-target"
url = "%s/v1/projects/p/locations/l"
dialect = "vertex-gemini"
model = "m"
bearer_command = [%q]
samples = ["short"]
every = "300ms"
jitter = "0s"
[[target]]
name = "aws-target"
url = %q
dialect = "bedrock"
model = "m"
aws_region = "us-east-1"
samples = ["short"]
every = "300ms"
jitter = "0s"
[[target]]
name = "google-target"
url = "%s/v1/projects/p/locations/l"
dialect = "vertex-anthropic"
model = "m"
google_credentials_file = %q
samples = ["short"]
every = "300ms"
jitter = "0s"
`, results, addr, runFile, deadURL, deadURL, target.URL, target.URL, tokenEndpoint.URL, secretFile, echo.URL, tokenFile, echo.URL, cmdFile, echo.URL, echo.URL, saFile),
		map[string]string{"TEST_KEY": key, "PUSH_AUTH": pushKey, "OTLP_AUTH": otlpKey,
			"AWS_ACCESS_KEY_ID": awsID, "AWS_SECRET_ACCESS_KEY": awsSecret, "AWS_SESSION_TOKEN": awsToken})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	waitFor(t, "a run that carried the key, its record, and a failed push", 30*time.Second, func() bool {
		mu.Lock()
		saw := sawKey
		mu.Unlock()
		rec, _ := os.ReadFile(results)
		return saw && strings.Contains(string(rec), `"outcome":"upstream_error"`) && strings.Contains(logs.String(), "push failed")
	})
	var metricsOut bytes.Buffer
	d.Metrics.Set.WritePrometheus(&metricsOut)
	waitFor(t, "the oauth and file targets' failed runs", 30*time.Second, func() bool {
		rec, _ := os.ReadFile(results)
		return strings.Contains(string(rec), "oauth2 token from") && strings.Contains(string(rec), `"target":"file-target"`) &&
			strings.Contains(string(rec), `"target":"command-target"`) && strings.Contains(string(rec), `"target":"aws-target"`) &&
			strings.Contains(string(rec), "google token for the service account")
	})
	var served []string
	for _, path := range []string{"/healthz", "/", "/api/status", "/metrics"} {
		_, b := call(t, http.MethodGet, "http://"+addr+path, "")
		served = append(served, b)
	}
	_, b := call(t, http.MethodPost, "http://"+addr+"/run?target=secret-target&sample=short", "wrong-"+runToken)
	served = append(served, b)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rec, _ := os.ReadFile(results)
	mu.Lock()
	if !sawKey {
		t.Fatal("the target never received the key: the test proves nothing")
	}
	mu.Unlock()
	if !strings.Contains(string(rec), `"outcome":"upstream_error"`) || !strings.Contains(logs.String(), "push failed") {
		t.Fatalf("the runs and pushes did not fail as planned:\n%s\n%s", rec, logs)
	}
	for name, out := range map[string]string{"log": logs.String(), "results log": string(rec), "metrics": metricsOut.String(), "served pages": strings.Join(served, "\n")} {
		for _, secret := range []string{key, "push-secret", "0123456789abcdef"} {
			if strings.Contains(out, secret) {
				t.Errorf("the %s contains a secret (%s)", name, secret)
			}
		}
		for _, secret := range []string{clientSecret, fileToken, strings.TrimPrefix(otlpKey, "Bearer "), runToken, cmdToken, awsID, awsSecret, awsToken, saKeyID} {
			if p := leak.Any(out, secret); p != "" {
				t.Errorf("the %s shows %q", name, p)
			}
		}
		if m := regexp.MustCompile(`Signature=[0-9a-f]{8}|eyJ[A-Za-z0-9_-]{16}`).FindString(out); m != "" {
			t.Errorf("the %s shows a SigV4 signature or a JWT: %q", name, m)
		}
	}
	if !strings.Contains(string(rec), "[redacted]") {
		t.Errorf("no echoed secret came back redacted: the walk proves nothing:\n%s", rec)
	}
	for _, line := range strings.Split(string(rec), "\n") {
		if strings.Contains(line, `"target":"aws-target"`) && !strings.Contains(line, `you sent [redacted] [redacted]`) {
			t.Errorf("the bedrock target's echo of its signature is not there, redacted: the walk proves nothing for it:\n%s", line)
		}
	}
}

// walkServiceAccount is a service account's JSON key (a new RSA key)
// whose token_uri is tokenURI, and its private key id.
func walkServiceAccount(t *testing.T, tokenURI string) ([]byte, string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	const id = "walkkeyid0123456789abcdef0123456789abcd"
	b, _ := json.Marshal(map[string]string{"type": "service_account", "private_key_id": id, "client_email": "walk@p.iam.gserviceaccount.com",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "token_uri": tokenURI})
	return b, id
}

// SIGTERM during a run that outlasts shutdown_timeout: the run is
// cancelled and recorded as cancelled by shutdown, not as a failure, and
// Run returns promptly after the timeout.
func TestShutdownCancelsRunsInFlight(t *testing.T) {
	srv := refserver.NewUnstarted(nil)
	srv.Hold = true
	srv.Start()
	defer srv.Close()
	results := filepath.Join(t.TempDir(), "results.jsonl")
	d, _ := testDaemon(t, fmt.Sprintf(`results_log = %q
shutdown_timeout = "300ms"
[[target]]
name = "hang"
url = %q
samples = ["short"]
every = "1m"
jitter = "0s"
`, results, srv.URL), nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	waitFor(t, "the run to be in flight", 30*time.Second, func() bool { return len(srv.Conns()) > 0 })
	start := time.Now()
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("shutdown took %v", el)
	}
	var out bytes.Buffer
	d.Metrics.Set.WritePrometheus(&out)
	if !strings.Contains(out.String(), `streamprobe_runs_cancelled_by_shutdown_total{region="",host=`) || strings.Contains(out.String(), `outcome="client_cancelled"} 1`) {
		t.Errorf("metrics:\n%s", out.String())
	}
	rec, _ := os.ReadFile(results)
	if !strings.Contains(string(rec), `"error":"cancelled by shutdown"`) {
		t.Errorf("results log: %s", rec)
	}
	if !strings.Contains(out.String(), "streamprobe_runs_cancelled_by_shutdown_total") || !strings.HasSuffix(grepLine(out.String(), "streamprobe_runs_cancelled_by_shutdown_total"), " 1") {
		t.Errorf("cancelled-by-shutdown counter: %q", grepLine(out.String(), "streamprobe_runs_cancelled_by_shutdown_total"))
	}
}

func grepLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// A reload swaps the jobs; the new target runs, the old one stops.
func TestReloadSwapsJobs(t *testing.T) {
	a := refserver.NewServer(refserver.Events(refserver.Ms(10, 20), -1))
	defer a.Close()
	b := refserver.NewServer(refserver.Events(refserver.Ms(10, 20), -1))
	defer b.Close()
	conf := func(name, url string) string {
		return fmt.Sprintf("[[target]]\nname = %q\nurl = %q\nend_data = \"\"\nsamples = [\"short\"]\nevery = \"200ms\"\njitter = \"0s\"\n", name, url)
	}
	d, logs := testDaemon(t, conf("a", a.URL), nil)
	reload := make(chan *config.Config)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, reload) }()
	waitFor(t, "a run of the old target", 30*time.Second, func() bool { return len(a.Conns()) > 0 })
	nc, err := config.Parse("test.toml", []byte(conf("b", b.URL)), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	reload <- nc
	waitFor(t, "a run of the new target", 30*time.Second, func() bool { return len(b.Conns()) > 0 })
	nA := len(a.Conns()) // the old scheduler is stopped: at most a run in flight remains
	waitFor(t, "three more runs of the new target", 30*time.Second, func() bool { return len(b.Conns()) >= 4 })
	stop()
	<-done
	if len(a.Conns()) > nA+1 {
		t.Errorf("old target: %d runs when the new one started, %d after three more of it", nA, len(a.Conns()))
	}
	if !strings.Contains(logs.String(), `"msg":"config reloaded"`) {
		t.Errorf("no reload in the log")
	}
}

func TestMetricsNamesAndLabels(t *testing.T) {
	cfg, err := config.Parse("m.toml", []byte("region = \"eu\"\nhost = \"h1\"\n[push]\nhistograms = \"prometheus\"\n[[target]]\nname = \"t\"\nurl = \"http://x\"\n"), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics(cfg)
	tfc, gap := 412.0, 46.0
	r := probe.Record{Target: "t", Sample: "short", Dialect: "sse", Drill: "none", Outcome: probe.Success, TFCMs: &tfc, Stalls: 1,
		Gaps: probe.Gaps{Values: []float64{gap, 300}}}
	m.Observe(r)
	var out bytes.Buffer
	m.Set.WritePrometheus(&out)
	for _, want := range []string{
		`streamprobe_tfc_seconds_bucket{region="eu",host="h1",target="t",sample="short",dialect="sse",drill="none",resumed="false",le="0.5"} 1`,
		`streamprobe_gap_seconds_count{region="eu",host="h1",target="t",sample="short",dialect="sse",drill="none"} 2`,
		`streamprobe_runs_total{region="eu",host="h1",target="t",sample="short",dialect="sse",drill="none",outcome="success"} 1`,
		`streamprobe_runs_total{region="eu",host="h1",target="t",sample="short",dialect="sse",drill="none",outcome="timeout"} 0`,
		`streamprobe_stalled_runs_total{region="eu",host="h1",target="t",sample="short",dialect="sse",drill="none"} 1`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %s", want)
		}
	}
	if strings.Contains(out.String(), `resumed="true",le="0.5"} 1`) {
		t.Error("an unresumed TFC entered the resumed series")
	}
}

// The daemon's own faults: a push endpoint that answers slowly never delays
// a run; a full disk under the results log loses no metric; a 429 with
// Retry-After stops the job until then.
func TestDaemonFaults(t *testing.T) {
	t.Run("slow push endpoint", func(t *testing.T) {
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer slow.Close()
		defer close(release)
		target := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
		defer target.Close()
		d, logs := testDaemon(t, fmt.Sprintf("[push]\nurl = %q\ninterval = \"1s\"\ntimeout = \"1s\"\n[[target]]\nname = \"t\"\nurl = %q\nend_data = \"\"\nsamples = [\"short\"]\nevery = \"200ms\"\njitter = \"0s\"\n", slow.URL, target.URL), nil)
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx, nil) }()
		// The push never answers (release is closed at the end): runs
		// must go on regardless, while pushes time out.
		waitFor(t, "8 runs and a push timeout while the push endpoint hangs", 30*time.Second, func() bool {
			l := logs.String()
			return len(target.Conns()) >= 8 && (strings.Contains(l, "timed out after 1s") || strings.Contains(l, "deadline exceeded"))
		})
		stop()
		<-done
	})
	t.Run("disk full under the results log", func(t *testing.T) {
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skip("no /dev/full")
		}
		target := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
		defer target.Close()
		// The results log is a regular file (anything else is refused);
		// once the daemon runs, its writes go to /dev/full, as when the
		// disk fills up under it: every write fails with ENOSPC.
		results := filepath.Join(t.TempDir(), "results.jsonl")
		conf := fmt.Sprintf("results_log = %q\n[[target]]\nname = \"t\"\nurl = %q\nend_data = \"\"\nsamples = [\"short\"]\nevery = \"200ms\"\njitter = \"0s\"\n", results, target.URL)
		d, logs := testDaemon(t, conf, nil)
		reloaded := make(chan struct{}, 1)
		d.Reloaded = func(*config.Config) { reloaded <- struct{}{} }
		reload := make(chan *config.Config)
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx, reload) }()
		// After a reload the daemon runs with its results log open: the
		// reload's callback orders what it did before what follows here.
		reload <- reloadConf(t, conf)
		<-reloaded
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Skip("cannot open /dev/full:", err)
		}
		d.results.swap(full)
		waitFor(t, "a run and its failed write", 30*time.Second, func() bool {
			var out bytes.Buffer
			d.Metrics.Set.WritePrometheus(&out)
			return strings.Contains(out.String(), `outcome="success"} `) && strings.Contains(logs.String(), "no space left on device")
		})
		stop()
		<-done
		var out bytes.Buffer
		d.Metrics.Set.WritePrometheus(&out)
		runs := grepLine(out.String(), `streamprobe_runs_total{region="",host=`)
		if !strings.Contains(out.String(), `outcome="success"} `) || strings.Contains(grepLine(out.String(), "streamprobe_results_log_errors_total"), " 0") {
			t.Errorf("metrics after a full disk:\n%s\n%s", runs, grepLine(out.String(), "streamprobe_results_log_errors_total"))
		}
		if !strings.Contains(logs.String(), "no space left on device") {
			t.Errorf("the write error was not logged")
		}
	})
	t.Run("429 Retry-After is honoured", func(t *testing.T) {
		var hits int
		var mu sync.Mutex
		limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits++
			mu.Unlock()
			w.Header().Set("Retry-After", "60")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}))
		defer limited.Close()
		d, _ := testDaemon(t, fmt.Sprintf("[[target]]\nname = \"t\"\nurl = %q\nsamples = [\"short\"]\nevery = \"1h\"\njitter = \"0s\"\n", limited.URL), nil)
		// The schedule runs on a fake clock: each poll below moves it an
		// hour on, so a run comes due every time, while the Retry-After
		// of 60 s (real time) has not passed.
		fc := clockwork.NewFakeClock()
		d.Clock = fc
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx, nil) }()
		waitFor(t, "5 runs skipped for Retry-After", 30*time.Second, func() bool {
			fc.Advance(time.Hour)
			var out bytes.Buffer
			d.Metrics.Set.WritePrometheus(&out)
			l := grepLineWith(out.String(), "streamprobe_runs_skipped_total", `reason="retry_after"`)
			n, _ := strconv.Atoi(l[strings.LastIndex(l, " ")+1:])
			return n >= 5
		})
		stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		if hits != 1 {
			t.Errorf("the target was hit %d times after asking to wait 60 s", hits)
		}
	})
}

// config keeps its own lists of dialects, samples and drills (it imports no
// probe code); every one the probe knows must load, and nothing else.
func TestConfigAcceptsWhatTheProbeKnows(t *testing.T) {
	load := func(key, value string) error {
		_, err := config.Parse("k.toml", []byte(fmt.Sprintf("[[target]]\nname = \"t\"\nurl = \"http://127.0.0.1:1\"\n%s = %s\n", key, value)), jobs.Env(os.Getenv))
		return err
	}
	for _, d := range dialect.Names() {
		v := fmt.Sprintf("%q", d)
		if slices.Contains(dialect.Signed(), d) {
			v += "\naws_region = \"us-east-1\"" // a loopback URL names no region to sign for
		}
		if err := load("dialect", v); err != nil {
			t.Errorf("dialect %s: %v", d, err)
		}
	}
	for _, s := range dialect.SampleNames {
		if err := load("samples", fmt.Sprintf("[%q]", s)); err != nil {
			t.Errorf("sample %s: %v", s, err)
		}
	}
	for _, d := range probe.DrillNames {
		if err := load("drills", fmt.Sprintf("[%q]", d)); err != nil {
			t.Errorf("drill %s: %v", d, err)
		}
	}
	if load("dialect", `"grpc"`) == nil || load("drills", `["replay"]`) == nil {
		t.Error("an unknown dialect or drill loaded")
	}
}

func TestAnthropicKeyIsXAPIKey(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("sk-ant-file\n"), 0o600)
	for _, src := range []string{`bearer_env = "ANTHROPIC_API_KEY"`, fmt.Sprintf("bearer_file = %q", keyFile)} {
		cfg, err := config.Parse("a.toml", []byte("[[target]]\nname = \"a\"\nurl = \"http://127.0.0.1:1\"\ndialect = \"anthropic-messages\"\n"+src+"\n"),
			jobs.Env(func(string) string { return "sk-ant-env" }))
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := jobs.Build(cfg, "", func(string) string { return "sk-ant-env" })
		if err != nil {
			t.Fatal(err)
		}
		// A bearer_file's key is read as each run starts: the header a
		// run sends.
		tg, err := jobs[0].WithToken(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		h := tg.Header
		if h.Get("Authorization") != "" || !strings.HasPrefix(h.Get("X-Api-Key"), "sk-ant-") {
			t.Errorf("%s: headers %v", src, h)
		}
	}
}

// Every label name the daemon writes, on any series of either histogram
// flavour, is one config refuses as a [labels] key: a key of the same
// name would make a series carry the label twice (version, goversion and
// failed were accepted, and streamprobe_build_info then had version=
// twice: invalid exposition).
func TestLabelNamesAreReserved(t *testing.T) {
	for _, flavour := range []string{"vmrange", "prometheus"} {
		cfg, err := config.Parse("m.toml", []byte("region = \"eu\"\nhost = \"h1\"\n[labels]\nteam = \"a\"\n[push]\nhistograms = \""+flavour+
			"\"\n[budget.short]\ntfc = \"1s\"\n[[target]]\nname = \"t\"\nurl = \"http://x\"\ndrills = [\"drop\"]\n"), jobs.Env(os.Getenv))
		if err != nil {
			t.Fatal(err)
		}
		js, err := jobs.Build(cfg, "", os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		m := NewMetrics(cfg)
		m.Reconfigure(cfg, js)
		tfc := 412.0
		m.Observe(probe.Record{Target: "t", Sample: "short", Dialect: "sse", Drill: probe.DrillNone, Outcome: probe.Success, TFCMs: &tfc,
			Gaps: probe.Gaps{Count: 1, Values: []float64{300}}})
		m.Observe(probe.Record{Target: "t", Sample: "long", Dialect: "sse", Drill: probe.DrillDrop, Outcome: probe.Success, TFCMs: &tfc,
			Resumed: true, Verdict: probe.VerdictMissed})
		var out bytes.Buffer
		m.Set.WritePrometheus(&out)
		names := map[string]bool{}
		for _, line := range strings.Split(out.String(), "\n") {
			open := strings.IndexByte(line, '{')
			if open < 0 || strings.HasPrefix(line, "#") {
				continue
			}
			seen := map[string]bool{}
			for _, pair := range strings.Split(line[open+1:strings.LastIndexByte(line, '}')], `",`) {
				name, _, _ := strings.Cut(pair, "=")
				if seen[name] {
					t.Errorf("%s: label %s twice: %s", flavour, name, line)
				}
				seen[name] = true
				names[name] = true
			}
		}
		delete(names, "team") // the config's own
		for _, want := range []string{"target", "verdict", "failed", "version", "goversion", "metric", "reason"} {
			if !names[want] {
				t.Errorf("%s: no series carries %s: the test no longer sees every label", flavour, want)
			}
		}
		for name := range names {
			if err := config.CheckLabelName(name); err == nil {
				t.Errorf("%s: the daemon writes label %q, which config accepts as a [labels] key", flavour, name)
			}
		}
	}
}

// A run of more than probe.MaxGapValues gaps (the record's JSON keeps
// that many) enters the gap histogram and the over-budget count with
// every gap: 12,000 chunks gave a histogram count of 10,000.
func TestGapHistogramCountsEveryGap(t *testing.T) {
	cfg, err := config.Parse("m.toml", []byte("[budget.long]\ngap = \"250ms\"\n[[target]]\nname = \"t\"\nurl = \"http://x\"\n"), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	rec := runChunks(t, 12_000)
	if !rec.Intended() || rec.Gaps.Count != 11_999 || len(rec.Gaps.Values) != probe.MaxGapValues {
		t.Fatalf("record: %s %s, %d gaps, %d values, %d stalls", rec.Outcome, rec.Error, rec.Gaps.Count, len(rec.Gaps.Values), rec.Stalls)
	}
	m := NewMetrics(cfg)
	m.Observe(rec)
	var out bytes.Buffer
	m.Set.WritePrometheus(&out)
	if got := seriesSumOf(out.String(), "streamprobe_gap_seconds_count{"); got != rec.Gaps.Count {
		t.Errorf("gap histogram counts %d gaps, the run had %d", got, rec.Gaps.Count)
	}
	// The budget is the stall threshold: every stall of the run (the
	// scheduled ones, every 1,000th gap, the last past the record's
	// 10,000 values; any the machine added; less one a late write may
	// have shortened under it) is over it.
	if got := seriesSumOf(out.String(), "streamprobe_over_budget_total{", `metric="gap"`); got != rec.Stalls {
		t.Errorf("over-budget gaps %d, the run had %d stalls", got, rec.Stalls)
	}
}

// runChunks runs the long sample against a loopback stream of n chunks,
// 50 us apart but every 1,000th gap 300 ms, and returns its record.
func runChunks(t *testing.T, n int) probe.Record {
	t.Helper()
	steps := make([]refserver.Step, 0, n+1)
	var at time.Duration
	for i := range n {
		if i > 0 && i%1000 == 0 {
			at += 300 * time.Millisecond
		} else {
			at += 50 * time.Microsecond
		}
		steps = append(steps, refserver.Step{At: at, Data: "c"})
	}
	steps = append(steps, refserver.Step{At: at, Data: "[DONE]"})
	srv := refserver.NewServer(steps)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return probe.Run(ctx, dialect.Target{Name: "t", URL: srv.URL, Dialect: "sse", EndData: "[DONE]"},
		probe.Options{Sample: dialect.Samples["long"]}).Record
}

// A refused run (here Anthropic's stop_reason refusal) is its own outcome
// everywhere the daemon shows one: its runs_total series (which is there
// from 0 on: deploy's TestEveryOutcomeSeriesStartsAtZero),
// runs_failed_total, the log at warn, and the status page's row, red,
// with the refusal named.
func TestRefusedRunInMetricsLogAndStatusPage(t *testing.T) {
	a := &refserver.Anthropic{}
	a.MessageStart(10*time.Millisecond, 18).MessageDeltaUsage(20*time.Millisecond, "refusal", 18, 5).Stop(30 * time.Millisecond)
	srv := refserver.NewServer(a.Steps())
	defer srv.Close()
	addr := freeAddr(t)
	d, logs := testDaemon(t, fmt.Sprintf(`region = "eu"
host = "h1"
listen = %q
[[target]]
name = "claude"
url = %q
dialect = "anthropic-messages"
samples = ["short"]
every = "1h"
jitter = "0s"
`, addr, srv.URL), nil)
	series := `streamprobe_runs_total{region="eu",host="h1",target="claude",sample="short",dialect="anthropic-messages",drill="none",outcome="refused"}`
	stop := runDaemon(t, d, nil)
	defer stop()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var page string
	waitFor(t, "the refused run on the status page", 30*time.Second, func() bool {
		resp, err := hc.Get("http://" + addr + "/")
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page = string(b)
		return strings.Contains(page, `class="run"`)
	})
	if !regexp.MustCompile(`<td class="over">refused</td>`).MatchString(page) || !strings.Contains(page, html.EscapeString("refused: the model declined to answer (stop_reason refusal)")) {
		t.Errorf("status page: no red refused row naming the refusal in\n%s", page)
	}
	resp, err := hc.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{series + " 1\n",
		`streamprobe_runs_failed_total{region="eu",host="h1",target="claude",sample="short",dialect="anthropic-messages",drill="none"} 1` + "\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"run"`) || !strings.Contains(logs.String(), `"outcome":"refused"`) {
		t.Errorf("log: no warning for the refused run in\n%s", logs.String())
	}
}

// A target with budget tables of its own ([target.budget.<sample>]) is
// counted against them: its gap of 300 ms is within its own 1 s where the
// global 250 ms would count it over; its budgets in force are exported
// with its target label, the global ones as they were.
func TestOverBudgetCountsATargetsOwnBudgets(t *testing.T) {
	cfg, err := config.Parse("m.toml", []byte(`[budget.long]
gap = "250ms"
tfc = "2s"
[[target]]
name = "global"
url = "http://x"
[[target]]
name = "own"
url = "http://y"
[target.budget.long]
gap = "1s"
`), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics(cfg)
	tfc := 100.0
	for _, target := range []string{"global", "own"} {
		m.Observe(probe.Record{Target: target, Sample: "long", Dialect: "sse", Drill: probe.DrillNone, Outcome: probe.Success, Chunks: 3, TFCMs: &tfc,
			Gaps: probe.Gaps{Count: 2, Values: []float64{300, 20}}})
	}
	var out bytes.Buffer
	m.Set.WritePrometheus(&out)
	text := out.String()
	if got := seriesSumOf(text, "streamprobe_over_budget_total{", `target="global"`, `metric="gap"`); got != 1 {
		t.Errorf("global target: %d gaps over its 250 ms budget, want 1", got)
	}
	if got := seriesSumOf(text, "streamprobe_over_budget_total{", `target="own"`, `metric="gap"`); got != 0 {
		t.Errorf("own target: %d gaps over its own 1 s budget, want 0", got)
	}
	for _, want := range []string{
		`streamprobe_budget_seconds{region="",host="` + cfg.Host + `",sample="long",metric="gap"} 0.25`,
		`streamprobe_budget_seconds{region="",host="` + cfg.Host + `",target="own",sample="long",metric="gap"} 1`,
		`streamprobe_budget_seconds{region="",host="` + cfg.Host + `",target="own",sample="long",metric="tfc"} 2`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, `target="global",sample="long",metric="gap"} 0.25`) {
		t.Error("a target without budgets of its own got target-labelled budget gauges")
	}
}
