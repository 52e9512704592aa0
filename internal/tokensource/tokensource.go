// Package tokensource gives a target the credential it sends, fetched for
// each run rather than once at load time: a key from a file, read again
// on every run (short-lived tokens that another process writes, as cloud
// credential helpers do), or an OAuth2 access token from a token endpoint
// by the client-credentials grant, cached and fetched again before it
// expires. The daemon, check and once ask a target's Source for its token
// as a run starts (internal/jobs); nothing here knows a dialect or a
// config. An error never shows a secret: the client secret, a token, or
// an answer of the token endpoint that echoes one is scrubbed
// (textgate.Scrub) before it is returned.
package tokensource

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/streamprobe/streamprobe/textgate"
)

// Source gives the credential a run sends.
type Source interface {
	// Token returns the credential to send now. Its error names where it
	// looked and never shows a secret.
	Token(ctx context.Context) (string, error)
}

// maxError bounds the text of an error.
const maxError = 512

// File is a Source that reads the file at its path on every call, the
// value trimmed: a token written by another process is sent as it is at
// the time of the run.
type File string

// Token reads the file.
func (f File) Token(context.Context) (string, error) {
	b, err := os.ReadFile(string(f))
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return "", fmt.Errorf("cannot read %s: %v", string(f), pe.Err)
		}
		return "", fmt.Errorf("cannot read %s", string(f))
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("%s is empty", string(f))
	}
	if err := headerValue(v); err != nil {
		return "", fmt.Errorf("the content of %s %v", string(f), err)
	}
	return v, nil
}

// headerValue reports why v cannot be a header value (a control byte);
// it never quotes v.
func headerValue(v string) error {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return fmt.Errorf("holds the byte 0x%02x at offset %d, which no HTTP header may carry", c, i)
		}
	}
	return nil
}

// Early is how long before its expiry a cached OAuth2 token is fetched
// again: a run never starts with a token that may expire while it
// streams (max_stream is 5 minutes by default, a token's life an hour).
const Early = 5 * time.Minute

// ClientCredentials is an OAuth2 client-credentials grant (RFC 6749
// 4.4): the token endpoint, the client's id and secret, and the scopes.
type ClientCredentials struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scopes       []string
	// Early overrides Early (0: Early).
	Early time.Duration
	// HTTP is the client the token endpoint is asked with; nil: one with
	// a 30 s timeout and the environment's proxy.
	HTTP *http.Client
}

// OAuth2 is a Source of access tokens by the client-credentials grant:
// one token is fetched and kept while it is valid for longer than Early,
// then fetched again; calls in between share it (one fetch at a time). A
// token endpoint that fails is asked again at the next call.
type OAuth2 struct {
	cc      ClientCredentials
	now     func() time.Time
	mu      sync.Mutex // guards tok and secrets; held across a fetch
	tok     *oauth2.Token
	secrets []string
}

// NewOAuth2 returns the Source of cc.
func NewOAuth2(cc ClientCredentials) *OAuth2 {
	if cc.Early == 0 {
		cc.Early = Early
	}
	if cc.HTTP == nil {
		cc.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	return &OAuth2{cc: cc, now: time.Now, secrets: []string{cc.ClientSecret, url.QueryEscape(cc.ClientSecret)}}
}

// Token returns the cached access token while it is valid for longer
// than Early, else fetches one within ctx.
func (o *OAuth2) Token(ctx context.Context) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tok != nil && (o.tok.Expiry.IsZero() || o.tok.Expiry.Sub(o.now()) > o.cc.Early) {
		return o.tok.AccessToken, nil
	}
	conf := &clientcredentials.Config{ClientID: o.cc.ClientID, ClientSecret: o.cc.ClientSecret, TokenURL: o.cc.TokenURL, Scopes: o.cc.Scopes}
	tok, err := conf.Token(context.WithValue(ctx, oauth2.HTTPClient, o.cc.HTTP))
	where := textgate.RedactURL(o.cc.TokenURL)
	switch {
	case err != nil:
		return "", o.failureLocked(err)
	case tok.AccessToken == "":
		return "", fmt.Errorf("oauth2 token from %s: the answer has no access_token", where)
	}
	if err := headerValue(tok.AccessToken); err != nil {
		return "", fmt.Errorf("oauth2 token from %s: the access token %v", where, err)
	}
	o.tok = tok
	o.secrets = append(o.secrets[:2], tok.AccessToken)
	return tok.AccessToken, nil
}

// failureLocked is a failed fetch as an error that shows no secret: the token
// endpoint's status and its answer scrubbed of the client secret and of
// the last token, or the transport's error.
func (o *OAuth2) failureLocked(err error) error {
	secrets := o.secrets
	where := textgate.RedactURL(o.cc.TokenURL)
	var re *oauth2.RetrieveError
	var ue *url.Error
	var text string
	switch {
	case errors.As(err, &re) && re.Response != nil:
		text = fmt.Sprintf("status %d", re.Response.StatusCode)
		if re.ErrorCode != "" {
			text += " " + re.ErrorCode
		}
		if body := strings.TrimSpace(string(re.Body)); body != "" {
			text += fmt.Sprintf("; response %q", textgate.Scrub(body, secrets, 200))
		}
	case errors.As(err, &ue):
		text = ue.Err.Error()
	default:
		text = err.Error()
	}
	return errors.New(textgate.Scrub("oauth2 token from "+where+": "+text, secrets, maxError))
}

// Secrets are the values an output must never show: the client secret
// and the last token fetched.
func (o *OAuth2) Secrets() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.secrets...)
}
