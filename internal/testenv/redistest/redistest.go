// Package redistest runs a real Redis (Debian's redis-server) on loopback
// for a test: no persistence, a port of its own, stopped at cleanup. It
// is a test helper, internal to streamprobe.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/tools"
)

// Redis is a running redis-server.
type Redis struct {
	// Addr is its address, 127.0.0.1:PORT; URL is redis://Addr.
	Addr, URL string
}

// Bin returns the redis-server binary, skipping the test when there is
// none (recorded for tools.M's summary), unless CI is set: then the test
// fails (.ci/run installs it).
func Bin(t testing.TB) string {
	t.Helper()
	return tools.Need(t, "redis-server", "redis-server")
}

// Start runs redis-server on a free loopback port until the test ends.
// A port taken between its choice and the server's bind is chosen again.
func Start(t testing.TB) *Redis {
	t.Helper()
	bin := Bin(t)
	var last string
	for range 5 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--daemonize", "no", "--loglevel", "warning", "--dir", t.TempDir())
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		r := &Redis{Addr: fmt.Sprintf("127.0.0.1:%d", port)}
		r.URL = "redis://" + r.Addr
		if r.ready(done) {
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-done
			})
			return r
		}
		cmd.Process.Kill()
		<-done
		last = out.String()
	}
	t.Fatalf("redis-server did not start: %s", last)
	return nil
}

// ready waits up to 10 s for the server to answer PING; false when it
// exited (its port was taken) or never answered.
func (r *Redis) ready(done <-chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return false
		default:
		}
		if v, err := r.Do("PING"); err == nil && v == "PONG" {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// Do sends one command and returns its answer's first line (a status, an
// error, an integer or a bulk string's length): enough for CLIENT PAUSE,
// PING and the like.
func (r *Redis) Do(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", r.Addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, "-") {
		return "", fmt.Errorf("redis: %s", line[1:])
	}
	return strings.TrimLeft(line, "+:$"), nil
}
