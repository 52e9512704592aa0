package probe

import (
	"crypto/tls"
	"net/http"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// NewClient returns the client for target t: a fresh connection for every
// request unless t.KeepAlive, HTTP/1.1 unless t.HTTP2, proxies from the
// environment, TLS verification off only for t.InsecureSkipVerify, and
// t's event size limit. Build it once per target, not per run;
// CloseIdleConnections on its HTTP client when the target goes away.
//
// A fresh HTTP/1.1 connection goes through resumeclient.Transport, which
// keeps no goroutine or write buffer per live stream; keep-alive, HTTP/2
// and proxies through net/http's transport.
func NewClient(t dialect.Target) *resumeclient.Client {
	var tlsConf *tls.Config
	if t.InsecureSkipVerify {
		tlsConf = &tls.Config{InsecureSkipVerify: true}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Every run pays DNS, TCP and TLS as a user's first request does, and
	// one run's connection never decides what the next one measures.
	tr.DisableKeepAlives = !t.KeepAlive
	tr.TLSClientConfig = tlsConf
	// The same bound on a response header as the lean transport's (net/
	// http's own is 10 MB; over HTTP/2 it is the header list size the
	// client advertises).
	tr.MaxResponseHeaderBytes = MaxResponseHeader
	tr.ForceAttemptHTTP2 = t.HTTP2
	if !t.HTTP2 {
		// A non-nil empty map turns net/http's HTTP/2 off.
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	var rt http.RoundTripper = tr
	if !t.KeepAlive && !t.HTTP2 {
		rt = &resumeclient.Transport{TLSClientConfig: tlsConf, Fallback: tr}
	}
	return &resumeclient.Client{HTTP: &http.Client{Transport: rt}, MaxEventSize: t.MaxEventSize}
}

// MaxResponseHeader bounds a response's header, on every connection path.
const MaxResponseHeader = 1 << 20
