package jobs

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/leak"
	"github.com/streamprobe/streamprobe/internal/tokensource"
	"github.com/streamprobe/streamprobe/probe"
)

// vertexAPI is a Gemini stream on Vertex AI's path that notes the
// Authorization of every request.
func vertexAPI(t *testing.T) (string, func() []string) {
	g := &refserver.Gemini{}
	srv := refserver.NewUnstarted(g.Text(0, "a").Finish(time.Millisecond, "b", "STOP", 3, 2, 0).Steps())
	var mu sync.Mutex
	var got []string
	srv.StatusFor = func(r *http.Request, _ []byte) (int, string) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		return 0, ""
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/v1/projects/p/locations/us-central1", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

func vertexConfig(url, extra string) string {
	return fmt.Sprintf("[[target]]\nname = \"vx\"\nurl = %q\ndialect = \"vertex-gemini\"\nmodel = \"gemini-2.5-flash\"\nsamples = [\"short\", \"long\"]\n%s", url, extra)
}

// bearer_command runs for every run and its output is the token sent
// (a token rotated between runs is the next run's); a command that fails
// fails that run, named, its output echoed on stderr scrubbed.
func TestBearerCommandEveryRun(t *testing.T) {
	url, got := vertexAPI(t)
	dir := t.TempDir()
	n := filepath.Join(dir, "n")
	script := filepath.Join(dir, "print-token")
	os.WriteFile(script, []byte("#!/bin/sh\nn=$(cat "+n+" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "+n+"\n"+
		"if [ -e "+dir+"/fail ]; then echo ya29.leaked-on-failure-0123456789; echo \"error: reauth needed for ya29.leaked-on-failure-0123456789\" >&2; exit 1; fi\n"+
		"echo ya29.token-$n-0123456789\necho second line ignored\n"), 0o755)
	c := parse(t, vertexConfig(url, fmt.Sprintf("bearer_command = [%q, \"--flag\"]\n", script)), nil)
	js, err := Build(c, "", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []Job{js[0], js[1]} {
		if r := runJob(t, j); r.Outcome != probe.Success {
			t.Fatalf("%s: %s %s", j.Name, r.Outcome, r.Error)
		}
	}
	if g := got(); strings.Join(g, ",") != "Bearer ya29.token-1-0123456789,Bearer ya29.token-2-0123456789" {
		t.Errorf("the API saw %q", g)
	}
	os.WriteFile(filepath.Join(dir, "fail"), nil, 0o600)
	r := runJob(t, js[0])
	if r.Outcome != probe.UpstreamError || !strings.HasPrefix(r.Error, "credentials: bearer_command "+script+": exit status 1: error: reauth needed for [redacted]") {
		t.Errorf("a failing command: %s %q", r.Outcome, r.Error)
	}
	if len(got()) != 2 {
		t.Errorf("a run without a token reached the API: %q", got())
	}
	if _, err := (tokensource.Command{Args: []string{"sleep", "5"}, Timeout: 50 * time.Millisecond}).Token(t.Context()); err == nil || err.Error() != "bearer_command sleep: no token within 50ms" {
		t.Errorf("a command that hangs: %v", err)
	}
}

// A service account's JSON key: golang.org/x/oauth2/google signs a JWT
// with the key and exchanges it at the key's token_uri (here a loopback
// endpoint that checks the JWT's RS256 signature with the public key, the
// issuer, the audience and the cloud-platform scope); the access token
// (an hour) is sent as a bearer token by every run, fetched once; a token
// endpoint that refuses, echoing the assertion, fails the run with no
// secret shown.
func TestGoogleServiceAccount(t *testing.T) {
	url, got := vertexAPI(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	const email = "probe@my-project.iam.gserviceaccount.com"
	var mu sync.Mutex
	issued, refuse := 0, false
	var lastAssertion string
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		a := r.PostForm.Get("assertion")
		mu.Lock()
		defer mu.Unlock()
		lastAssertion = a
		if why := checkJWT(a, &key.PublicKey, email, "http://"+r.Host+"/token"); why != "" || refuse || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"invalid_grant","error_description":"%s: bad assertion %s"}`, why, a)
			return
		}
		issued++
		json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("ya29.c.sa-%d-0123456789abcdef", issued), "expires_in": 3600, "token_type": "Bearer"})
	}))
	defer tokens.Close()
	keyFile := filepath.Join(t.TempDir(), "sa.json")
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "my-project", "private_key_id": "0123456789abcdef0123456789abcdef01234567",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": email, "token_uri": tokens.URL + "/token"})
	os.WriteFile(keyFile, b, 0o600)
	c := parse(t, vertexConfig(url, fmt.Sprintf("google_credentials_file = %q\n", keyFile)), nil)
	js, err := Build(c, "", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []Job{js[0], js[1], js[0]} {
		if r := runJob(t, j); r.Outcome != probe.Success {
			t.Fatalf("%s: %s %s", j.Name, r.Outcome, r.Error)
		}
	}
	if g := got(); len(g) != 3 || g[0] != "Bearer ya29.c.sa-1-0123456789abcdef" || g[2] != g[0] || issued != 1 {
		t.Errorf("the API saw %q; %d tokens issued, want 1", g, issued)
	}
	mu.Lock()
	refuse = true
	mu.Unlock()
	js, _ = Build(c, "", env(nil)) // a reload: a new token source, so a fetch
	r := runJob(t, js[0])
	out, _ := json.Marshal(r)
	if r.Outcome != probe.UpstreamError || !strings.HasPrefix(r.Error, "credentials: google token for the service account in "+keyFile+": status 400") {
		t.Fatalf("a refused assertion: %s %q", r.Outcome, r.Error)
	}
	mu.Lock()
	a := lastAssertion
	mu.Unlock()
	sig := a[strings.LastIndex(a, ".")+1:]
	for _, s := range []string{sig, "0123456789abcdef0123456789abcdef01234567"} {
		if p := leak.Any(string(out), s); p != "" {
			t.Errorf("the record shows %q: %s", p, out)
		}
	}
}

// checkJWT reports why a is not a JWT signed by pub for iss and aud with
// the cloud-platform scope; "" when it is.
func checkJWT(a string, pub *rsa.PublicKey, iss, aud string) string {
	parts := strings.Split(a, ".")
	if len(parts) != 3 {
		return "not a JWT"
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "signature encoding"
	}
	h := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], sig) != nil {
		return "signature"
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Iss, Aud, Scope string
		Exp, Iat        int64
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Iss != iss || claims.Aud != aud || claims.Scope != tokensource.CloudPlatform || claims.Exp <= claims.Iat {
		return "claims " + string(payload)
	}
	return ""
}
