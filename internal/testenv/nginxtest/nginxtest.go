// Package nginxtest runs a real nginx (Debian's nginx-light) on loopback as
// a reverse proxy in front of a test's upstream, with nginx's defaults
// (proxy_buffering on): the proxy most streams of the field pass through.
// It is a test helper, internal to streamprobe.
package nginxtest

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/tools"
)

// Proxy is a running nginx that proxies every request to one upstream.
type Proxy struct {
	// URL is the proxy's base URL, http://127.0.0.1:PORT.
	URL string
	// Dir is nginx's prefix: its config, pid and temp files.
	Dir string

	cmd  *exec.Cmd
	done chan struct{}
	log  *syncBuffer
}

// Bin returns the nginx binary, skipping the test when there is none,
// unless CI is set: then the test fails (.ci/run installs nginx-light).
func Bin(t testing.TB) string {
	t.Helper()
	return tools.Need(t, "nginx-light", "nginx", "/usr/sbin/nginx")
}

// Config is the nginx.conf Start writes: nginx's defaults but for the
// paths, one server on listen that passes every request to upstream
// (host:port) over HTTP/1.1, and location's directives added to its
// location block (e.g. "proxy_buffering off;"). No proxy_buffering
// directive is set: the default, on.
func Config(dir, listen, upstream, location string) string {
	return fmt.Sprintf(`daemon off;
master_process off;
error_log stderr warn;
pid %[1]s/nginx.pid;
events {}
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    server {
        listen %[2]s;
        location / {
            proxy_pass http://%[3]s;
            %[4]s
        }
    }
}
`, dir, listen, upstream, location)
}

// Start starts nginx in front of upstream (an http:// URL or host:port),
// with location's directives in its location block, waits until it
// accepts connections, and stops it in t.Cleanup.
func Start(t testing.TB, upstream, location string) *Proxy {
	t.Helper()
	bin := Bin(t)
	if u, err := url.Parse(upstream); err == nil && u.Host != "" {
		upstream = u.Host
	}
	var lastErr error
	// A free port can be taken between the probe for it and nginx's bind:
	// try a few.
	for range 3 {
		p, err := start(t, bin, upstream, location)
		if err == nil {
			return p
		}
		lastErr = err
	}
	t.Fatalf("nginxtest: %v", lastErr)
	return nil
}

func start(t testing.TB, bin, upstream, location string) (*Proxy, error) {
	dir := t.TempDir()
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(Config(dir, addr, upstream, location)), 0o644); err != nil {
		return nil, err
	}
	p := &Proxy{URL: "http://" + addr, Dir: dir, done: make(chan struct{}), log: &syncBuffer{}}
	p.cmd = exec.Command(bin, "-p", dir, "-c", conf)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-p.done:
			return nil, fmt.Errorf("nginx exited before it listened on %s: %s", addr, strings.TrimSpace(p.log.String()))
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("nginx did not listen on %s within 10s: %s", addr, strings.TrimSpace(p.log.String()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() {
		p.stop()
		if s := strings.TrimSpace(p.log.String()); s != "" && t.Failed() {
			t.Logf("nginx said: %s", s)
		}
	})
	return p, nil
}

// stop ends nginx (fast shutdown, then a kill) and waits for it.
func (p *Proxy) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// syncBuffer is nginx's log, written by the process's output copiers and
// read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
