package tokensource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/streamprobe/streamprobe/textgate"
)

// Command is a Source that runs a command for each run and sends what it
// prints (the first line, trimmed), as `gcloud auth print-access-token`
// prints a Google access token: a credentials helper that knows when its
// token expires. Args is the program and its arguments (no shell). The
// command's error output is shown only scrubbed of what it printed.
type Command struct {
	Args []string
	// Timeout bounds one run of the command (0: CommandTimeout).
	Timeout time.Duration
}

// CommandTimeout bounds one run of a token command.
const CommandTimeout = 30 * time.Second

// Token runs the command.
func (c Command) Token(ctx context.Context) (string, error) {
	if len(c.Args) == 0 || c.Args[0] == "" {
		return "", errors.New("bearer_command is empty")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = CommandTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{w: &stdout, n: 64 << 10}, &limited{w: &stderr, n: 4 << 10}
	err := cmd.Run()
	out := strings.TrimSpace(stdout.String())
	tok, _, _ := strings.Cut(out, "\n")
	tok = strings.TrimSpace(tok)
	name := c.Args[0]
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("bearer_command %s: no token within %s", name, timeout)
	case err != nil:
		why := strings.TrimSpace(stderr.String())
		msg := fmt.Sprintf("bearer_command %s: %v", name, err)
		if why != "" {
			msg += ": " + why
		}
		return "", errors.New(textgate.Scrub(msg, []string{out, tok}, maxError))
	case tok == "":
		return "", fmt.Errorf("bearer_command %s printed no token", name)
	}
	if err := headerValue(tok); err != nil {
		return "", fmt.Errorf("the token bearer_command %s printed %v", name, err)
	}
	return tok, nil
}

// limited is a writer that keeps the first n bytes written to it.
type limited struct {
	w *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// jwtLike is a JWT, or the start of one (base64url of `{"`), as a token
// endpoint's answer may quote the assertion it was sent.
var jwtLike = regexp.MustCompile(`eyJ[A-Za-z0-9_\-.=]{16,}`)

// CloudPlatform is the OAuth scope a service account's token is asked
// for: Vertex AI takes it.
const CloudPlatform = "https://www.googleapis.com/auth/cloud-platform"

// Google is a Source of Google OAuth access tokens for a service account
// (its JSON key): golang.org/x/oauth2/google signs a JWT with the key and
// exchanges it at the key's token_uri; the token (an hour) is cached and
// fetched again Early before it expires.
type Google struct {
	mu      sync.Mutex
	ts      oauth2.TokenSource
	where   string
	secrets []string
}

// NewGoogle returns the Source of the service account key keyJSON (read
// from the file named where), scopes CloudPlatform unless given. hc is
// the client of the token endpoint (nil: one with a 30 s timeout).
func NewGoogle(keyJSON []byte, where string, hc *http.Client, scopes ...string) (*Google, error) {
	if len(scopes) == 0 {
		scopes = []string{CloudPlatform}
	}
	conf, err := google.JWTConfigFromJSON(keyJSON, scopes...)
	if err != nil {
		return nil, fmt.Errorf("%s: not a service account key: %s", where, textgate.Scrub(err.Error(), nil, 200))
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	g := &Google{where: where, ts: oauth2.ReuseTokenSourceWithExpiry(nil, conf.TokenSource(ctx), Early)}
	g.secrets = []string{conf.PrivateKeyID}
	return g, nil
}

// Token returns the cached token while it is valid for longer than
// Early, else fetches one. ctx does not bound the fetch (the token
// source keeps its own context, with the client's timeout).
func (g *Google) Token(ctx context.Context) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	tok, err := g.ts.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		text := jwtLike.ReplaceAllString(err.Error(), "[redacted]")
		if errors.As(err, &re) && re.Response != nil {
			// Not the body: a token endpoint may echo the signed
			// assertion, a credential for as long as it is valid.
			text = fmt.Sprintf("status %d", re.Response.StatusCode)
			if re.ErrorCode != "" {
				text += " " + re.ErrorCode
			}
			if d := re.ErrorDescription; d != "" {
				text += ": " + jwtLike.ReplaceAllString(d, "[redacted]")
			}
		}
		return "", errors.New(textgate.Scrub("google token for the service account in "+g.where+": "+text, g.secrets, maxError))
	}
	if err := headerValue(tok.AccessToken); err != nil {
		return "", fmt.Errorf("google token for the service account in %s: the access token %v", g.where, err)
	}
	g.secrets = append(g.secrets[:1], tok.AccessToken)
	return tok.AccessToken, nil
}
