package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// once through an HTTP_PROXY with credentials, to a proxy that answers
// 407 echoing Proxy-Authorization (as it is, decoded, and the password
// alone) in its body and a header: neither the record (JSON), the text nor stderr shows the
// password or the encoded credentials. The real binary runs, since Go
// reads the proxy environment once per process.
func TestOnceHidesProxyCredentials(t *testing.T) {
	bin := buildBinary(t)
	const user, pass = "probe", "proxy-pass-0123456789-secret"
	var asked atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		auth := r.Header.Get("Proxy-Authorization")
		dec, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(auth, "Basic "))
		w.Header().Set("Proxy-Authenticate", `Basic realm="`+string(dec)+`"`)
		w.Header().Set("X-Echo", auth)
		w.WriteHeader(http.StatusProxyAuthRequired)
		u, p, _ := strings.Cut(string(dec), ":")
		fmt.Fprintf(w, `{"error":{"message":"denied: %s %s; user %s, password %s"}}`, auth, dec, u, p)
	}))
	defer proxy.Close()
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasSuffix(strings.ToUpper(k), "_PROXY") {
			env = append(env, kv)
		}
	}
	env = append(env, "HTTP_PROXY=http://"+user+":"+pass+"@"+strings.TrimPrefix(proxy.URL, "http://"))
	secrets := []string{pass, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))}
	for _, asJSON := range []bool{false, true} {
		args := []string{"once", "-url", "http://target.invalid/v1/chat/completions", "-dialect", "openai-chat", "-timeout", "10s"}
		if asJSON {
			args = append(args, "-json")
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFail {
			t.Fatalf("json %v: %v, want exit %d:\n%s%s", asJSON, err, exitFail, stdout.String(), stderr.String())
		}
		out := stdout.String() + stderr.String()
		t.Logf("json %v: %s", asJSON, out)
		if !strings.Contains(out, "407") {
			t.Errorf("json %v: the output does not name the proxy's 407: %s", asJSON, out)
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("json %v: the output shows %q:\n%s", asJSON, s, out)
			}
		}
		if asJSON {
			var rec map[string]any
			if err := json.Unmarshal([]byte(stdout.String()), &rec); err != nil {
				t.Errorf("record: %v: %q", err, stdout.String())
			}
		}
	}
	if n := asked.Load(); n < 2 {
		t.Errorf("the proxy saw %d requests, want one per run", n)
	}
}

// buildBinary builds streamprobe into a temporary folder and returns its
// path; it skips the test under -short.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "streamprobe")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}
