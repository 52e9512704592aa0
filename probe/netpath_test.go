package probe

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/testenv/reftest"
)

// seen is what a loopback server saw of the requests it answered: the
// peer's address, the Host header, the TLS server name.
type seen struct {
	mu                 sync.Mutex
	peers, hosts, snis []string
}

func (s *seen) add(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peers = append(s.peers, r.RemoteAddr)
	s.hosts = append(s.hosts, r.Host)
	if r.TLS != nil {
		s.snis = append(s.snis, r.TLS.ServerName)
	}
}

func (s *seen) last() (peer, host, sni string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.peers) == 0 {
		return "", "", ""
	}
	if len(s.snis) > 0 {
		sni = s.snis[len(s.snis)-1]
	}
	return s.peers[len(s.peers)-1], s.hosts[len(s.hosts)-1], sni
}

// streamServer serves a short SSE stream on a listener of network
// ("tcp4" on 127.0.0.1, "tcp6" on ::1), over TLS when tlsOn.
func streamServer(t *testing.T, network string, tlsOn bool) (*httptest.Server, *seen) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "tcp6" {
		addr = "[::1]:0"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("no %s loopback here: %v", network, err)
	}
	s := &seen{}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.add(r)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: a\n\ndata: b\n\ndata: [DONE]\n\n")
	}))
	ts.Listener.Close()
	ts.Listener = ln
	if tlsOn {
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	return ts, s
}

func runOnce(t *testing.T, tg dialect.Target) Record {
	t.Helper()
	c := NewClient(tg)
	t.Cleanup(c.HTTP.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), reftest.RunDeadline)
	defer cancel()
	return Run(ctx, tg, Options{Sample: dialect.Samples["short"], Client: c}).Record
}

// transports are the client's two paths: the lean HTTP/1.1 transport of
// a fresh connection per run, and net/http's (keep_alive).
var transports = []struct {
	name      string
	keepAlive bool
}{{"lean transport", false}, {"net/http transport", true}}

// ip_version = 6 connects over IPv6 (::1 here) and records the address;
// ip_version = 4 cannot reach a server on ::1, and 6 cannot reach one on
// 127.0.0.1: the family is enforced on both transports.
func TestIPVersion(t *testing.T) {
	v6, s6 := streamServer(t, "tcp6", false)
	v4, _ := streamServer(t, "tcp4", false)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			tg := dialect.Target{Name: "t", URL: v6.URL, Dialect: "sse", EndData: "[DONE]", KeepAlive: tr.keepAlive, Net: &dialect.Network{IPVersion: "6"}}
			r := runOnce(t, tg)
			peer, _, _ := s6.last()
			if r.Outcome != Success || !strings.HasPrefix(peer, "[::1]:") {
				t.Fatalf("ip_version 6 to %s: %s %s (server saw %q)", v6.URL, r.Outcome, r.Error, peer)
			}
			if want := strings.TrimPrefix(v6.URL, "http://"); r.RemoteAddr != want {
				t.Errorf("remote_addr %q, want %q", r.RemoteAddr, want)
			}
			tg.Net.IPVersion = "4"
			if r := runOnce(t, tg); r.Outcome != UpstreamError || r.RemoteAddr != "" {
				t.Errorf("ip_version 4 to a server on ::1: %s %q %q", r.Outcome, r.Error, r.RemoteAddr)
			}
			tg.URL, tg.Net.IPVersion = v4.URL, "6"
			if r := runOnce(t, tg); r.Outcome != UpstreamError {
				t.Errorf("ip_version 6 to a server on 127.0.0.1: %s %q", r.Outcome, r.Error)
			}
			tg.Net.IPVersion = "any"
			if r := runOnce(t, tg); r.Outcome != Success || r.RemoteAddr != strings.TrimPrefix(v4.URL, "http://") {
				t.Errorf("ip_version any: %s %q remote_addr %q", r.Outcome, r.Error, r.RemoteAddr)
			}
		})
	}
}

// resolve dials a fixed address for the URL's host, as curl's --resolve:
// a name that does not exist (.invalid never resolves) reaches the
// loopback server, which sees the name in Host and, over TLS, in SNI.
func TestResolveFixedAddress(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		ts, s := streamServer(t, "tcp4", tlsOn)
		_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
		scheme := map[bool]string{false: "http", true: "https"}[tlsOn]
		name := "canary.streamprobe.invalid"
		for _, tr := range transports {
			t.Run(scheme+" "+tr.name, func(t *testing.T) {
				tg := dialect.Target{Name: "t", URL: scheme + "://" + name + ":" + port + "/", Dialect: "sse", EndData: "[DONE]",
					KeepAlive: tr.keepAlive, InsecureSkipVerify: tlsOn, Net: &dialect.Network{Resolve: "127.0.0.1"}}
				r := runOnce(t, tg)
				if r.Outcome != Success {
					t.Fatalf("%s %s", r.Outcome, r.Error)
				}
				_, host, sni := s.last()
				if host != name+":"+port || (tlsOn && sni != name) {
					t.Errorf("the server saw Host %q, SNI %q; want the name", host, sni)
				}
				if r.RemoteAddr != "127.0.0.1:"+port || r.DNSMs != nil {
					t.Errorf("remote_addr %q, dns_ms %v: want the fixed address and no DNS", r.RemoteAddr, r.DNSMs)
				}
			})
		}
	}
}

// source_address binds the connection's local end: the server sees the
// run come from 127.0.0.2.
func TestSourceAddress(t *testing.T) {
	ts, s := streamServer(t, "tcp4", false)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			tg := dialect.Target{Name: "t", URL: ts.URL, Dialect: "sse", EndData: "[DONE]", KeepAlive: tr.keepAlive, Net: &dialect.Network{SourceAddr: "127.0.0.2"}}
			r := runOnce(t, tg)
			peer, _, _ := s.last()
			if r.Outcome != Success || !strings.HasPrefix(peer, "127.0.0.2:") {
				t.Fatalf("%s %s: the server saw the run from %q, want 127.0.0.2", r.Outcome, r.Error, peer)
			}
		})
	}
}

// A target's proxy carries its runs (net/http's own proxy choice leaves
// loopback alone; the target's does not), on both transports; the
// record's remote_addr is the proxy's. proxy = "none" goes direct.
func TestProxyPerTarget(t *testing.T) {
	ts, s := streamServer(t, "tcp4", false)
	var mu sync.Mutex
	var proxied []string
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			mu.Lock()
			proxied = append(proxied, pr.In.URL.String())
			mu.Unlock()
			pr.Out.URL = pr.In.URL // a forward proxy: the request names its URL
		},
		FlushInterval: -1,
		Transport:     &http.Transport{DisableKeepAlives: true},
	})
	t.Cleanup(proxy.Close)
	pu, _ := url.Parse(proxy.URL)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			mu.Lock()
			proxied = nil
			mu.Unlock()
			tg := dialect.Target{Name: "t", URL: ts.URL + "/events", Dialect: "sse", EndData: "[DONE]", KeepAlive: tr.keepAlive, Net: &dialect.Network{Proxy: pu}}
			r := runOnce(t, tg)
			mu.Lock()
			n := len(proxied)
			mu.Unlock()
			if r.Outcome != Success || n != 1 || r.RemoteAddr != pu.Host {
				t.Fatalf("%s %s: %d request(s) through the proxy, remote_addr %q (proxy %s)", r.Outcome, r.Error, n, r.RemoteAddr, pu.Host)
			}
			tg.Net = &dialect.Network{NoProxy: true}
			r = runOnce(t, tg)
			peer, _, _ := s.last()
			mu.Lock()
			n = len(proxied)
			mu.Unlock()
			if r.Outcome != Success || n != 1 || r.RemoteAddr != strings.TrimPrefix(ts.URL, "http://") || !strings.HasPrefix(peer, "127.0.0.1:") {
				t.Errorf("proxy none: %s %s, %d through the proxy, remote_addr %q", r.Outcome, r.Error, n, r.RemoteAddr)
			}
		})
	}
}

// A target that sets no network path records no remote_addr: existing
// records do not change.
func TestNoNetworkPathNoRemoteAddr(t *testing.T) {
	ts, _ := streamServer(t, "tcp4", false)
	r := runOnce(t, dialect.Target{Name: "t", URL: ts.URL, Dialect: "sse", EndData: "[DONE]"})
	if r.Outcome != Success || r.RemoteAddr != "" {
		t.Errorf("%s %s remote_addr %q", r.Outcome, r.Error, r.RemoteAddr)
	}
}
