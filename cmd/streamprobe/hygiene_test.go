package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/leak"
)

// A server that echoes the API key in its in-stream error, in each
// dialect and around the cut of the message: neither once's text nor its
// JSON shows any piece of the key.
func TestOnceNeverShowsAnEchoedKey(t *testing.T) {
	const key = "sk-once-echo-0123456789abcdefghijklmnopq"
	t.Setenv("STREAMPROBE_TEST_KEY", key)
	for _, echo := range refserver.EchoKeyDialects {
		srv := refserver.NewUnstarted(nil)
		srv.ScheduleFor = refserver.EchoKey(echo)
		srv.Start()
		t.Cleanup(srv.Close)
		name := refserver.EchoKeyDialect(echo)
		keyFlag := []string{"-bearer-env", "STREAMPROBE_TEST_KEY"}
		if name == "anthropic-messages" {
			keyFlag = []string{"-header-env", "X-Api-Key: STREAMPROBE_TEST_KEY"}
		}
		for pad := dialect.MaxMessage - len(key) - 4; pad <= dialect.MaxMessage; pad += 2 {
			for _, asJSON := range []bool{false, true} {
				args := append([]string{"once", "-url", fmt.Sprintf("%s/v1?pad=%d", srv.URL, pad), "-dialect", name, "-model", "m"}, keyFlag...)
				if asJSON {
					args = append(args, "-json")
				}
				code, stdout, stderr := runCmd(t, args...)
				if code != exitFail || !strings.Contains(stdout, "upstream_error") {
					t.Fatalf("%s pad %d: exit %d, the server did not answer as planned:\n%s%s", echo, pad, code, stdout, stderr)
				}
				if p := leak.Prefix(stdout+stderr, key); p != "" {
					t.Fatalf("%s pad %d json %v: the output shows %q:\n%s", echo, pad, asJSON, p, stdout)
				}
			}
		}
	}
}

// Ids, error messages and resume details that carry terminal escapes are
// printed escaped: the text output holds no control character.
func TestOnceTextEscapesControlCharacters(t *testing.T) {
	const esc = "\x1b[31m"
	steps := refserver.DrillEvents()
	for i := range steps {
		if steps[i].ID != "" {
			steps[i].ID = esc + steps[i].ID + "\x07\u009b\u202e"
		}
	}
	bad := refserver.NewUnstarted(steps)
	bad.Bug = refserver.Inclusive
	bad.Start()
	defer bad.Close()
	errSrv := refserver.NewServer([]refserver.Step{{Data: `{"error":{"message":"` + `\u001b[31mred\u001b[0m\r overloaded"}}`}})
	defer errSrv.Close()

	for _, args := range [][]string{
		{"once", "-url", bad.URL, "-drill", "drop", "-ids", "opaque"},
		{"once", "-url", bad.URL, "-end-data", ""},
		{"once", "-url", errSrv.URL, "-dialect", "openai-chat"},
	} {
		_, stdout, _ := runCmd(t, args...)
		if strings.ContainsAny(stdout, "\x1b\r\x07\u009b\u202e") {
			t.Errorf("%v: the output holds control characters:\n%q", args, stdout)
		}
		if !strings.Contains(stdout, "outcome") {
			t.Errorf("%v: no record printed:\n%s", args, stdout)
		}
	}
	_, stdout, _ := runCmd(t, "once", "-url", bad.URL, "-drill", "drop", "-ids", "opaque")
	if !strings.Contains(stdout, `\x1b[31m`) || !strings.Contains(stdout, `\u202e`) {
		t.Errorf("the ids are not shown escaped:\n%s", stdout)
	}
}

// Every config that run refuses, validate refuses first, with the same
// one-line message naming file:line:key, and both exit 2.
func TestValidateRefusesWhatRunRefuses(t *testing.T) {
	for _, name := range []string{"bad-listen.toml", "bad-results-log-dir.toml", "bad-every-overflow.toml", "bad-number-duration.toml", "bad-number-schedule.toml"} {
		t.Run(name, func(t *testing.T) {
			path := "../../config/testdata/" + name
			vcode, _, verr := runCmd(t, "validate", "-config", path)
			rcode, _, rerr := runCmd(t, "run", "-config", path)
			vmsg, _ := strings.CutPrefix(strings.TrimSpace(verr), "streamprobe validate: ")
			rmsg, _ := strings.CutPrefix(strings.TrimSpace(rerr), "streamprobe run: ")
			if vcode != exitUsage || rcode != exitUsage {
				t.Errorf("validate exit %d, run exit %d, want 2 and 2:\n%s\n%s", vcode, rcode, verr, rerr)
			}
			if vmsg != rmsg || !strings.HasPrefix(vmsg, path+":") || strings.Contains(vmsg, "\n") {
				t.Errorf("validate said %q, run said %q", vmsg, rmsg)
			}
		})
	}
}

// echoKeyConfig sets key in STREAMPROBE_TEST_KEY and writes a config of
// two targets that send it back: echo-stream in its stream, echo-body in
// a 401's body after pad.
func echoKeyConfig(t *testing.T, key, pad string) string {
	t.Helper()
	t.Setenv("STREAMPROBE_TEST_KEY", key)
	echo := refserver.NewUnstarted(nil)
	echo.ScheduleFor = refserver.EchoKey("openai-chat")
	echo.Start()
	t.Cleanup(echo.Close)
	body := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, pad+"bad key "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	t.Cleanup(body.Close)
	return writeConfig(t, fmt.Sprintf(`
[[target]]
name = "echo-stream"
url = "%s/v1?pad=150"
dialect = "openai-chat"
bearer_env = "STREAMPROBE_TEST_KEY"
samples = ["short"]
[[target]]
name = "echo-body"
url = %q
dialect = "openai-chat"
bearer_env = "STREAMPROBE_TEST_KEY"
samples = ["short"]
`, echo.URL, body.URL))
}

// check against servers that echo the key, in the stream and in an HTTP
// error body: its text, JSON, JUnit and HTML outputs hold no piece of it.
func TestCheckNeverShowsAnEchoedKey(t *testing.T) {
	const key = "sk-check-echo-0123456789abcdefghijklmnop"
	cfg := echoKeyConfig(t, key, strings.Repeat("y", 100)+" ")
	dir := t.TempDir()
	junit, html := filepath.Join(dir, "check.xml"), filepath.Join(dir, "check.html")
	for _, asJSON := range []bool{false, true} {
		args := []string{"check", "-config", cfg, "-runs", "2", "-junit", junit, "-html", html}
		if asJSON {
			args = append(args, "-json")
		}
		code, stdout, stderr := runCmd(t, args...)
		if code != exitFail || !strings.Contains(stdout, "upstream_error") {
			t.Fatalf("json %v: exit %d, the servers did not answer as planned:\n%s%s", asJSON, code, stdout, stderr)
		}
		outputs := map[string]string{"stdout": stdout, "stderr": stderr}
		for name, path := range map[string]string{"junit": junit, "html": html} {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			outputs[name] = string(b)
		}
		for name, out := range outputs {
			if p := leak.Prefix(out, key); p != "" {
				t.Errorf("json %v: check's %s shows %q of the key", asJSON, name, p)
			}
		}
		if !strings.Contains(outputs["junit"], "[redacted]") {
			t.Errorf("json %v: the JUnit file does not carry the scrubbed error: the test proves nothing", asJSON)
		}
	}
}
