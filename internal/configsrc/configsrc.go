// Package configsrc is where a config's text comes from: a file, or a URL
// that a fleet's hosts all read (https://, or http:// on loopback). A URL
// is fetched with a conditional GET (If-None-Match with the last ETag,
// If-Modified-Since with the last Last-Modified), with an optional bearer
// token (read from a file at every fetch) or client certificate, bounded
// in time and size; the last config the daemon applied is kept on disk
// (Keep), so that a host that restarts while the config server is down
// starts with it (Cached). It knows nothing of what the text means: the
// command parses and checks it (config.Parse, daemon.Check) before it
// replaces anything. An error never shows the URL's user info or query,
// nor the bearer token.
package configsrc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/streamprobe/streamprobe/textgate"
)

// MaxConfig bounds a fetched config's size.
const MaxConfig = 4 << 20

// DefaultTimeout bounds one fetch.
const DefaultTimeout = 10 * time.Second

// Options are how a URL is fetched and cached.
type Options struct {
	// CacheDir holds the last good copy; "" keeps none.
	CacheDir string
	// BearerFile holds a token sent as "Authorization: Bearer ..." (read
	// at every fetch: a rotated token is taken).
	BearerFile string
	// CertFile and KeyFile are a client certificate for the config
	// server; CAFile the CAs its certificate is checked against (default:
	// the system's).
	CertFile, KeyFile, CAFile string
	// Timeout bounds a fetch; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Source is a config's location.
type Source struct {
	loc    string
	u      *url.URL // nil: a file
	opts   Options
	client *http.Client

	mu      sync.Mutex // guards the fields below
	etag    string
	lastMod string
	last    []byte // the last text fetched (or read from the cache)
}

// Fetched is a config's text, and how it was had.
type Fetched struct {
	Text []byte
	// NotModified: the server answered 304, or the same text as the
	// last fetch: Text is that text, and nothing changed.
	NotModified bool
	// Cached: read from the cache, saved at SavedAt.
	Cached  bool
	SavedAt time.Time
}

// IsURL reports whether loc names a URL rather than a file.
func IsURL(loc string) bool {
	return strings.HasPrefix(loc, "https://") || strings.HasPrefix(loc, "http://")
}

// New checks loc (a path, or an https:// URL, or http:// on loopback)
// and opts, and returns its Source.
func New(loc string, opts Options) (*Source, error) {
	s := &Source{loc: loc, opts: opts}
	if !IsURL(loc) {
		return s, nil
	}
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" {
		return nil, errors.New("-config: want a file, an https:// URL, or an http:// URL on loopback")
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		return nil, fmt.Errorf("-config %s: plain http only on loopback (127.0.0.1, ::1, localhost): a config server elsewhere must be https", s.Name())
	}
	if u.User != nil {
		return nil, fmt.Errorf("-config %s: credentials may not be in the URL: use -config-bearer-file or -config-cert", s.Name())
	}
	s.u = u
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tc, err := opts.tlsConfig()
	if err != nil {
		return nil, err
	}
	tr.TLSClientConfig = tc
	s.client = &http.Client{Transport: tr, Timeout: cmpOr(opts.Timeout, DefaultTimeout), CheckRedirect: sameOrigin}
	if opts.BearerFile != "" {
		if _, err := readToken(opts.BearerFile); err != nil {
			return nil, fmt.Errorf("-config-bearer-file: %v", err)
		}
	}
	return s, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (o Options) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, errors.New("-config-cert and -config-key go together")
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("-config-cert %s, -config-key %s: %v", o.CertFile, o.KeyFile, unwrapPath(err))
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if o.CAFile != "" {
		b, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("-config-ca: %v", unwrapPath(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("-config-ca %s: no PEM certificate in it", o.CAFile)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin follows a redirect only to the same scheme and host: a
// bearer token never goes elsewhere.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 || req.URL.Scheme != via[0].URL.Scheme || req.URL.Host != via[0].URL.Host {
		return http.ErrUseLastResponse
	}
	return nil
}

// IsURL reports whether the source is a URL.
func (s *Source) IsURL() bool { return s.u != nil }

// Name is how errors and logs name the source: the path, or the URL
// without its query (which may carry a key) or user info.
func (s *Source) Name() string {
	if !IsURL(s.loc) {
		return s.loc
	}
	return textgate.RedactURL(s.loc)
}

// Fetch reads the file, or fetches the URL with a conditional GET. A
// failure is an error naming the source, never a secret.
func (s *Source) Fetch(ctx context.Context) (Fetched, error) {
	if s.u == nil {
		b, err := os.ReadFile(s.loc)
		if err != nil {
			return Fetched{}, fmt.Errorf("config: %w", err)
		}
		return Fetched{Text: b}, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.loc, nil)
	if err != nil {
		return Fetched{}, s.failure(nil, "%v", err)
	}
	req.Header.Set("Accept", "application/toml, text/plain;q=0.9, */*;q=0.1")
	s.mu.Lock()
	etag, lastMod, last := s.etag, s.lastMod, s.last
	s.mu.Unlock()
	if last != nil {
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		if lastMod != "" {
			req.Header.Set("If-Modified-Since", lastMod)
		}
	}
	var token string
	if s.opts.BearerFile != "" {
		if token, err = readToken(s.opts.BearerFile); err != nil {
			return Fetched{}, fmt.Errorf("fetch %s: -config-bearer-file: %v", s.Name(), err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return Fetched{}, s.failure([]string{token}, "timed out after %s", cmpOr(s.opts.Timeout, DefaultTimeout))
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Fetched{}, s.failure([]string{token}, "%v", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && last != nil:
		return Fetched{Text: last, NotModified: true}, nil
	case resp.StatusCode != http.StatusOK:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		return Fetched{}, s.failure([]string{token}, "status %d; response %q", resp.StatusCode, textgate.Scrub(string(b), []string{token}, 128))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxConfig+1))
	switch {
	case err != nil:
		return Fetched{}, s.failure([]string{token}, "reading the answer: %v", err)
	case len(b) > MaxConfig:
		return Fetched{}, s.failure(nil, "the config is larger than %d bytes", MaxConfig)
	}
	s.mu.Lock()
	s.etag, s.lastMod, s.last = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified"), b
	s.mu.Unlock()
	return Fetched{Text: b, NotModified: last != nil && bytes.Equal(b, last)}, nil
}

// failure is a failed fetch, scrubbed of secrets.
func (s *Source) failure(secrets []string, format string, args ...any) error {
	return errors.New(textgate.Scrub("fetch "+s.Name()+": "+fmt.Sprintf(format, args...), secrets, 512))
}

// readToken reads a bearer token file, trimmed; its content never goes
// into an error.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", unwrapPath(err)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	if strings.ContainsAny(v, "\r\n\x00") {
		return "", fmt.Errorf("%s holds a control byte", path)
	}
	return v, nil
}

// meta is what the cache keeps beside the text.
type meta struct {
	URL          string    `json:"url"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	SavedAt      time.Time `json:"saved_at"`
}

// cachePaths are the cache's files for this URL: the text and its meta.
func (s *Source) cachePaths() (string, string) {
	sum := sha256.Sum256([]byte(s.loc))
	base := filepath.Join(s.opts.CacheDir, "config-"+hex.EncodeToString(sum[:8]))
	return base + ".toml", base + ".json"
}

// Keep saves text, a config that was applied, as the last good copy,
// with the validators of the fetch that brought it when it is the last
// one fetched. Without a cache directory, or for a file, it does nothing.
func (s *Source) Keep(text []byte) error {
	if s.u == nil || s.opts.CacheDir == "" {
		return nil
	}
	if err := os.MkdirAll(s.opts.CacheDir, 0o750); err != nil {
		return fmt.Errorf("config cache: %v", unwrapPath(err))
	}
	m := meta{URL: s.Name(), SavedAt: time.Now().UTC()}
	s.mu.Lock()
	if bytes.Equal(text, s.last) {
		m.ETag, m.LastModified = s.etag, s.lastMod
	}
	s.mu.Unlock()
	mb, _ := json.Marshal(m)
	textPath, metaPath := s.cachePaths()
	for _, f := range []struct {
		path string
		b    []byte
	}{{textPath, text}, {metaPath, mb}} {
		if err := writeAtomic(f.path, f.b); err != nil {
			return fmt.Errorf("config cache: %v", err)
		}
	}
	return nil
}

// writeAtomic writes b to path by a rename: a crash leaves the old file
// or the new one, never half of one.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*")
	if err != nil {
		return unwrapPath(err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return unwrapPath(err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return unwrapPath(err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return unwrapPath(err)
	}
	if err := tmp.Close(); err != nil {
		return unwrapPath(err)
	}
	return unwrapPath(os.Rename(tmp.Name(), path))
}

// Cached reads the last good copy. Its validators become the next
// fetch's, so a server that still has it answers 304.
func (s *Source) Cached() (Fetched, error) {
	if s.u == nil || s.opts.CacheDir == "" {
		return Fetched{}, errors.New("no config cache")
	}
	textPath, metaPath := s.cachePaths()
	b, err := os.ReadFile(textPath)
	if err != nil {
		return Fetched{}, fmt.Errorf("no cached copy of %s in %s: %v", s.Name(), s.opts.CacheDir, unwrapPath(err))
	}
	var m meta
	if mb, err := os.ReadFile(metaPath); err == nil {
		json.Unmarshal(mb, &m)
	}
	s.mu.Lock()
	s.etag, s.lastMod, s.last = m.ETag, m.LastModified, b
	s.mu.Unlock()
	return Fetched{Text: b, Cached: true, SavedAt: m.SavedAt}, nil
}
