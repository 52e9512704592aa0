package resumeclient

import (
	"crypto/tls"
	"net/http/httptrace"
	"sync"
	"time"
)

// ConnTimes are the phases of setting up a connection, from net/http's
// trace. A phase that did not happen (a reused connection, no TLS, an IP
// address instead of a name) is zero.
type ConnTimes struct {
	DNS, Connect, TLS time.Duration
	// Reused reports a kept-alive connection: no setup was paid.
	Reused bool
	// Remote is the address the connection was made to ("ip:port"; a
	// proxy's when the request went through one); "" when none was made.
	Remote string
}

// connTrace collects ConnTimes. The transport may call the hooks from its
// own goroutines, and a losing dial may report after the request is done.
type connTrace struct {
	now                  func() time.Time
	mu                   sync.Mutex
	dnsStart, connStart  time.Time
	tlsStart             time.Time
	dns, connect, tlsDur time.Duration
	reused               bool
	remote               string
}

func (t *connTrace) hooks() *httptrace.ClientTrace {
	at := func(p *time.Time) {
		t.mu.Lock()
		if p.IsZero() {
			*p = t.now()
		}
		t.mu.Unlock()
	}
	done := func(start time.Time, d *time.Duration) {
		if *d == 0 && !start.IsZero() {
			*d = max(t.now().Sub(start), time.Nanosecond)
		}
	}
	return &httptrace.ClientTrace{
		DNSStart: func(httptrace.DNSStartInfo) { at(&t.dnsStart) },
		DNSDone: func(httptrace.DNSDoneInfo) {
			t.mu.Lock()
			done(t.dnsStart, &t.dns)
			t.mu.Unlock()
		},
		ConnectStart: func(string, string) { at(&t.connStart) },
		ConnectDone: func(_, _ string, err error) {
			t.mu.Lock()
			if err == nil {
				done(t.connStart, &t.connect)
			}
			t.mu.Unlock()
		},
		TLSHandshakeStart: func() { at(&t.tlsStart) },
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			t.mu.Lock()
			if err == nil {
				done(t.tlsStart, &t.tlsDur)
			}
			t.mu.Unlock()
		},
		GotConn: func(i httptrace.GotConnInfo) {
			t.mu.Lock()
			t.reused = i.Reused
			if i.Conn != nil {
				if a := i.Conn.RemoteAddr(); a != nil {
					t.remote = a.String()
				}
			}
			t.mu.Unlock()
		},
	}
}

func (t *connTrace) times() ConnTimes {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reused {
		return ConnTimes{Reused: true, Remote: t.remote}
	}
	return ConnTimes{DNS: t.dns, Connect: t.connect, TLS: t.tlsDur, Remote: t.remote}
}
