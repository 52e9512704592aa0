package probe

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/resumeclient"
)

// NewClient returns the client for target t: a fresh connection for every
// request unless t.KeepAlive, HTTP/1.1 unless t.HTTP2, proxies from the
// environment (or t.Net's), TLS verification off only for
// t.InsecureSkipVerify, t's event size limit, and t.Net's network path
// (IP family, fixed address, source address) on every connection. Build
// it once per target, not per run; CloseIdleConnections on its HTTP
// client when the target goes away.
//
// A fresh HTTP/1.1 connection goes through resumeclient.Transport, which
// keeps no goroutine or write buffer per live stream; keep-alive, HTTP/2
// and proxies through net/http's transport. Both dial with the same
// function and pick the proxy with the same one.
func NewClient(t dialect.Target) *resumeclient.Client {
	tlsConf := tlsConfig(t)
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
	dial, proxy := netPath(t)
	if dial != nil {
		tr.DialContext = dial
	}
	if proxy != nil {
		tr.Proxy = proxy
	}
	var rt http.RoundTripper = tr
	if !t.KeepAlive && !t.HTTP2 {
		rt = &resumeclient.Transport{TLSClientConfig: tlsConf, Fallback: tr, DialContext: dial, Proxy: proxy}
	}
	return &resumeclient.Client{HTTP: &http.Client{Transport: rt}, MaxEventSize: t.MaxEventSize}
}

// tlsConfig is t's TLS settings: nil for the system's roots and no client
// certificate; else its roots, its client certificate, and verification
// off only for t.InsecureSkipVerify.
func tlsConfig(t dialect.Target) *tls.Config {
	var conf *tls.Config
	if t.InsecureSkipVerify {
		conf = &tls.Config{InsecureSkipVerify: true}
	}
	if n := t.Net; n != nil && (n.RootCAs != nil || n.ClientCert != nil) {
		if conf == nil {
			conf = &tls.Config{}
		}
		conf.RootCAs = n.RootCAs
		if n.ClientCert != nil {
			conf.Certificates = []tls.Certificate{*n.ClientCert}
		}
	}
	return conf
}

// MaxResponseHeader bounds a response's header, on every connection path.
const MaxResponseHeader = 1 << 20

// netPath is t.Net as a dial function and a proxy function; nil for
// each the system's way.
func netPath(t dialect.Target) (func(ctx context.Context, network, addr string) (net.Conn, error), func(*http.Request) (*url.URL, error)) {
	var proxy func(*http.Request) (*url.URL, error)
	if !t.Net.Set() {
		return nil, nil
	}
	n := *t.Net
	switch {
	case n.NoProxy:
		proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	case n.Proxy != nil:
		proxy = http.ProxyURL(n.Proxy)
	}
	if n.IPVersion == "" && n.Resolve == "" && n.SourceAddr == "" {
		return nil, proxy
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if ip := net.ParseIP(n.SourceAddr); ip != nil {
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	host := ""
	if u, err := url.Parse(t.URL); err == nil {
		host = u.Hostname()
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		switch n.IPVersion {
		case "4":
			network = "tcp4"
		case "6":
			network = "tcp6"
		}
		if h, port, err := net.SplitHostPort(addr); err == nil && n.Resolve != "" && h == host {
			// Only the target's own host: a proxy is dialled as named.
			addr = net.JoinHostPort(n.Resolve, port)
		}
		return d.DialContext(ctx, network, addr)
	}, proxy
}
