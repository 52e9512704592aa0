package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/streamprobe/streamprobe/internal/neterr"
)

// listenerShutdown bounds the wait for a listener's requests in flight
// when it is closed (a reload moved it, or the daemon stops).
const listenerShutdown = 2 * time.Second

// listener is the daemon's server on the listen address. Only Run's
// goroutine touches it (apply and the shutdown run there): no lock.
type listener struct {
	addr string       // the listen address in force; "" none
	srv  *http.Server // serving addr; nil when none
}

// Listen binds the listen address, with an error an operator can act on:
// the address once, the cause without the socket call's wrapping, and for
// a port in use the likely why ("listen 127.0.0.1:9464: address already
// in use (is another streamprobe running? ...)").
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	err = neterr.Cause(err)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen %s: address already in use (is another streamprobe running? or give listen another port)", addr)
	}
	return nil, fmt.Errorf("listen %s: %v", addr, err)
}

// relisten moves the server to addr, served on ln (nil: addr is ""):
// the new address was bound before the old one is let go, which finishes
// its requests in flight in the background (Run waits for it).
func (d *Daemon) relisten(addr string, ln net.Listener) {
	old := d.web.srv
	d.web.addr, d.web.srv = addr, nil
	if ln != nil {
		d.web.srv = &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go d.web.srv.Serve(ln)
		d.Log.Info("serving /metrics and /healthz", "addr", ln.Addr().String(), "status_page", statusPageURL(ln.Addr()))
	}
	if old != nil {
		d.life.retired.Add(1)
		go func() {
			defer d.life.retired.Done()
			shutdownServer(old)
		}()
	}
}

// statusPageURL is the status page's URL on the bound address a: an
// address on every interface (0.0.0.0, ::) is reached on this host as
// localhost.
func statusPageURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// close stops the server, if any.
func (l *listener) close() {
	if l.srv != nil {
		shutdownServer(l.srv)
	}
}

func shutdownServer(srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), listenerShutdown)
	defer cancel()
	srv.Shutdown(ctx)
}

// Handler serves /metrics (the same set as the push, with # HELP and
// # TYPE lines), /healthz (200 and
// {"status":"ok"} when healthy, 503 and {"status":"unhealthy"} with the
// reasons otherwise, see Daemon.health), the status page on / and its
// content as JSON on /api/status, and the on-demand run, POST /run
// (ondemand.go).
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.serveStatus)
	mux.HandleFunc("GET /api/status", d.serveAPIStatus)
	mux.HandleFunc("POST /run", d.serveRun)
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		d.Metrics.WriteExposition(w)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		h := d.health(time.Now())
		w.Header().Set("Content-Type", "application/json")
		if h.Status != "ok" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(h)
	})
	return mux
}
