package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/streamprobe/streamprobe/internal/testenv/leak"
	"github.com/streamprobe/streamprobe/probe"
)

// authServer is an OpenAI-compatible stream that notes the Authorization
// header of every request.
func authServer(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(ts.Close)
	return ts, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

func runJob(t *testing.T, j Job) probe.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), j.Conf.MaxStream.Duration)
	defer cancel()
	return j.Run(ctx, nil).Record
}

// bearer_file is read again by every run: a token another process writes
// between two runs is the one the second run sends; a file gone at run
// time fails that run (upstream_error, the path named), not the daemon.
func TestBearerFileReadEveryRun(t *testing.T) {
	ts, got := authServer(t)
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("tok-first-0123456789\n"), 0o600)
	c := parse(t, fmt.Sprintf("[[target]]\nname = \"api\"\nurl = %q\ndialect = \"openai-chat\"\nbearer_file = %q\nsamples = [\"short\"]\n", ts.URL, tok), nil)
	js, err := Build(c, "", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if r := runJob(t, js[0]); r.Outcome != probe.Success {
		t.Fatalf("%s %s", r.Outcome, r.Error)
	}
	os.WriteFile(tok, []byte("tok-second-0123456789"), 0o600)
	if r := runJob(t, js[0]); r.Outcome != probe.Success {
		t.Fatalf("%s %s", r.Outcome, r.Error)
	}
	if g := got(); len(g) != 2 || g[0] != "Bearer tok-first-0123456789" || g[1] != "Bearer tok-second-0123456789" {
		t.Errorf("the server saw %q", g)
	}
	os.Remove(tok)
	r := runJob(t, js[0])
	if r.Outcome != probe.UpstreamError || r.Error != "credentials: cannot read "+tok+": no such file or directory" || r.Target != "api" || r.Sample != "short" {
		t.Errorf("a token file gone: %+v", r)
	}
}

// tokenServer is an OAuth2 token endpoint (client credentials) that
// issues tokens valid for expiresIn seconds, numbered, to the client
// "probe" with the secret; a wrong secret gets a 401 whose body echoes
// it.
type tokenServer struct {
	*httptest.Server
	mu        sync.Mutex
	issued    int
	expiresIn int
	scopes    []string
}

const clientSecret = "cs-oauth-secret-0123456789abcdef"

func newTokenServer(t *testing.T) *tokenServer {
	ts := &tokenServer{expiresIn: 3600}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		if r.PostForm.Get("grant_type") != "client_credentials" || id != "probe" || secret != clientSecret {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":"invalid_client","error_description":"bad secret %s for %s"}`, secret, id)
			return
		}
		ts.mu.Lock()
		ts.issued++
		n, exp := ts.issued, ts.expiresIn
		ts.scopes = append(ts.scopes, r.PostForm.Get("scope"))
		ts.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("at-%d-0123456789abcdef", n), "token_type": "Bearer", "expires_in": exp})
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tokenServer) count() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.issued
}

// OAuth2 client credentials: the token is fetched once and sent by every
// run while it is valid for longer than tokensource.Early; a token that
// expires sooner is fetched again before the next run (refreshed before
// it expires, never sent stale). Both jobs of a target share it.
func TestOAuth2TokenCachedAndRefreshed(t *testing.T) {
	api, got := authServer(t)
	tok := newTokenServer(t)
	secretFile := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secretFile, []byte(clientSecret+"\n"), 0o600)
	c := parse(t, fmt.Sprintf(`[[target]]
name = "api"
url = %q
dialect = "openai-chat"
samples = ["short", "long"]
[target.oauth2]
token_url = "%s/oauth/token"
client_id = "probe"
client_secret_file = %q
scopes = ["probe.read", "probe.stream"]
`, api.URL, tok.URL, secretFile), nil)
	js, err := Build(c, "", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []Job{js[0], js[1], js[0]} {
		if r := runJob(t, j); r.Outcome != probe.Success {
			t.Fatalf("%s: %s %s", j.Name, r.Outcome, r.Error)
		}
	}
	if n := tok.count(); n != 1 {
		t.Errorf("%d token requests for 3 runs of a token valid for an hour, want 1", n)
	}
	if tok.scopes[0] != "probe.read probe.stream" {
		t.Errorf("scope %q", tok.scopes[0])
	}
	tok.mu.Lock()
	tok.expiresIn = 120 // under tokensource.Early: fetched again before each run
	tok.mu.Unlock()
	// The cached token (an hour) is still good: the next run sends it; a
	// new one is fetched only when it nears its expiry. Force that by
	// building again (a reload makes new token sources).
	js, _ = Build(c, "", env(nil))
	for range 2 {
		if r := runJob(t, js[0]); r.Outcome != probe.Success {
			t.Fatalf("%s %s", r.Outcome, r.Error)
		}
	}
	g := got()
	want := []string{"Bearer at-1-0123456789abcdef", "Bearer at-1-0123456789abcdef", "Bearer at-1-0123456789abcdef", "Bearer at-2-0123456789abcdef", "Bearer at-3-0123456789abcdef"}
	if strings.Join(g, ",") != strings.Join(want, ",") {
		t.Errorf("the API saw\n%q\nwant\n%q", g, want)
	}
}

// A token endpoint that refuses the client and echoes its secret fails
// the run (upstream_error, the endpoint and its status named); the
// record, its JSON and the error show no piece of the secret.
func TestOAuth2FailureShowsNoSecret(t *testing.T) {
	api, got := authServer(t)
	tok := newTokenServer(t)
	const wrong = "cs-wrong-secret-abcdef0123456789"
	t.Setenv("STREAMPROBE_TEST_CS", wrong)
	c := parse(t, fmt.Sprintf("[[target]]\nname = \"api\"\nurl = %q\ndialect = \"openai-chat\"\nsamples = [\"short\"]\n[target.oauth2]\ntoken_url = \"%s/oauth/token\"\nclient_id = \"probe\"\nclient_secret_env = \"STREAMPROBE_TEST_CS\"\n", api.URL, tok.URL), map[string]string{"STREAMPROBE_TEST_CS": wrong})
	js, err := Build(c, "", env(map[string]string{"STREAMPROBE_TEST_CS": wrong}))
	if err != nil {
		t.Fatal(err)
	}
	r := runJob(t, js[0])
	b, _ := json.Marshal(r)
	if r.Outcome != probe.UpstreamError || !strings.HasPrefix(r.Error, "credentials: oauth2 token from "+tok.URL+"/oauth/token: status 401 invalid_client") {
		t.Fatalf("%s %q", r.Outcome, r.Error)
	}
	if !strings.Contains(r.Error, "[redacted]") {
		t.Errorf("the echoed secret is not shown redacted: the test proves nothing: %s", r.Error)
	}
	if p := leak.Any(string(b), wrong); p != "" {
		t.Errorf("the record shows %q of the client secret: %s", p, b)
	}
	if len(got()) != 0 {
		t.Errorf("the API was called without a token: %q", got())
	}
}
