// Package nodepeer starts a Node script that serves a real npm package as
// a test peer over loopback (internal/testenv/aisdkpeer, internal/testenv/mcppeer): the
// package installed next to the script with npm ci, the script listening
// on 127.0.0.1 and printing {"port":N} as its first line, and exiting when
// its stdin ends. Run starts any other child of the same protocol (the Go
// peers built from modules of their own, internal/testenv/mcppeer/mcpgo).
package nodepeer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Start runs `node script` in dir for the test and returns its base URL,
// http://127.0.0.1:PORT; cleanup stops it. Without node or the installed
// package (dir/node_modules/pkg/package.json: npm ci in dir) the test is
// skipped, but under CI (CI=true), where .ci/run installs both, it fails.
// The script's stderr is shown when the test fails.
func Start(t testing.TB, name, dir, script, pkg string) string {
	t.Helper()
	return StartProc(t, name, dir, script, pkg, nil).URL
}

// Proc is a running peer.
type Proc struct {
	// URL is its base URL, http://127.0.0.1:PORT.
	URL string
	// Stop ends it now (its stdin closed, then killed after 10 s), as
	// cleanup does; a second call does nothing.
	Stop func()
}

// StartProc runs `node script` in dir with env added to its environment,
// as Start does, and returns it with a way to stop it before cleanup.
func StartProc(t testing.TB, name, dir, script, pkg string, env []string) *Proc {
	t.Helper()
	_, errNode := exec.LookPath("node")
	_, errPkg := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if errNode != nil || errPkg != nil {
		msg := fmt.Sprintf("the %s peer needs node and `npm ci` in %s (node: %v, %s: %v)", name, dir, errNode, pkg, errPkg)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command("node", script)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return runProc(t, name, cmd)
}

// Run starts cmd for the test as a peer of this package's protocol: it
// prints {"port":N} as its first line on stdout, listens on 127.0.0.1:N
// and exits when its stdin ends (a Node script, or a Go peer built from a
// module of its own). It returns http://127.0.0.1:N; cleanup closes the
// peer's stdin and waits for it (killing it after 10 s). The peer's stderr
// is shown when the test fails.
func Run(t testing.TB, name string, cmd *exec.Cmd) string {
	t.Helper()
	return runProc(t, name, cmd).URL
}

// runProc is Run, with a way to stop the peer before cleanup.
func runProc(t testing.TB, name string, cmd *exec.Cmd) *Proc {
	t.Helper()
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	port := make(chan int, 1)
	go func() {
		var first struct{ Port int }
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			json.Unmarshal(sc.Bytes(), &first)
		}
		port <- first.Port
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		close(done)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			stdin.Close() // the peer exits when its stdin ends
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if s := stderr.String(); t.Failed() && s != "" {
			t.Logf("the %s peer's stderr:\n%s", name, s)
		}
	})
	select {
	case p := <-port:
		if p == 0 {
			<-done
			t.Fatalf("the %s peer printed no port; its stderr:\n%s", name, stderr.String())
		}
		return &Proc{URL: fmt.Sprintf("http://127.0.0.1:%d", p), Stop: stop}
	case <-time.After(60 * time.Second):
		t.Fatalf("the %s peer did not start within 60 s", name)
	}
	return nil
}

// lockedWriter collects a child's stderr (the first MiB) for the test to
// show.
type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.b.Len() < 1<<20 {
		w.b.Write(p)
	}
	return len(p), nil
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// GetJSON decodes the JSON answer to a GET of url (a peer's log) into v.
func GetJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("the peer's log: %w", err)
	}
	return nil
}
