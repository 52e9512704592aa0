//go:build linux

package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/streamprobe/streamprobe/probe"
)

// maxOnceRSSKiB is the documented bound on the peak RSS of one `once` run,
// whatever the server sends (docs/how-it-works.md "Bounded memory").
const maxOnceRSSKiB = 128 << 10

// The peak RSS of the real binary stays bounded against a server that
// sends 10M tiny events, and against a gzip bomb that expands to 15M: the
// run stops at max_chunks with a clear protocol_error.
func TestOnceMemoryIsBounded(t *testing.T) {
	bin := buildBinary(t)
	tiny := func(w io.Writer, n int) {
		bw := bufio.NewWriterSize(w, 64<<10)
		for i := 0; i < n; i++ {
			if _, err := bw.WriteString("data: x\n\n"); err != nil {
				return
			}
		}
		bw.Flush()
	}
	for _, tt := range []struct {
		name  string
		serve http.HandlerFunc
	}{
		{"10M tiny events", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			tiny(w, 10_000_000)
		}},
		{"gzip bomb of 15M events", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "gzip")
			zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
			tiny(zw, 15_000_000)
			zw.Close()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(tt.serve)
			defer ts.Close()
			cmd := exec.Command(bin, "once", "-url", ts.URL, "-json", "-end-data", "[DONE]")
			var out bytes.Buffer
			cmd.Stdout = &out
			rss := peakRSS(t, cmd)
			var rec probe.Record
			if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
				t.Fatalf("record: %v\n%s", err, out.Bytes())
			}
			if rec.Outcome != probe.ProtocolError || !strings.Contains(rec.Error, "more than 100000 content chunks") || rec.Chunks != probe.DefaultMaxChunks {
				t.Errorf("outcome %s (%s), chunks %d", rec.Outcome, rec.Error, rec.Chunks)
			}
			if strings.HasPrefix(tt.name, "gzip") && (rec.WireBytes == nil || *rec.WireBytes >= rec.Bytes) {
				t.Errorf("wire_bytes %v, bytes %d: the compressed bytes are counted apart", rec.WireBytes, rec.Bytes)
			}
			t.Logf("peak RSS %d KiB, chunks %d, bytes %d", rss, rec.Chunks, rec.Bytes)
			if rss > maxOnceRSSKiB {
				t.Errorf("peak RSS %d KiB, over the documented %d KiB", rss, maxOnceRSSKiB)
			}
		})
	}
}

// peakRSS runs cmd to its end and returns the peak RSS of the process
// itself, in KiB: VmHWM in /proc/<pid>/status, read while it is stopped at
// its exit (ptrace's PTRACE_EVENT_EXIT stop, before its memory is let go).
// Not the Maxrss of cmd.ProcessState: os/exec starts a child with vfork,
// sharing this process's memory until the exec, and the kernel's exec
// (fs/exec.c exec_mmap) raises the child's Maxrss to that memory's peak,
// so Maxrss is at least this test binary's own peak, which the other
// tests and their children drive.
func peakRSS(t *testing.T, cmd *exec.Cmd) int64 {
	t.Helper()
	// Every ptrace request comes from the thread that started the child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid, execed := cmd.Process.Pid, false
	for {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, 0, nil); errors.Is(err, syscall.EINTR) {
			continue
		} else if err != nil {
			t.Fatalf("wait4: %v", err)
		}
		if !ws.Stopped() {
			t.Fatalf("%s ended (%v) without stopping at its exit", cmd.Path, ws)
		}
		sig := ws.StopSignal()
		switch {
		case sig == syscall.SIGTRAP && ws.TrapCause() == syscall.PTRACE_EVENT_EXIT:
			status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if derr := syscall.PtraceDetach(pid); derr != nil {
				t.Errorf("ptrace detach: %v", derr)
			}
			cmd.Wait() // its exit status is the test's to judge, from its output
			if err != nil {
				t.Fatal(err)
			}
			return vmHWM(t, string(status))
		case sig == syscall.SIGTRAP && !execed:
			// The stop after the exec: from here on, stop at the exit.
			execed = true
			if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT); err != nil {
				t.Fatalf("ptrace: %v", err)
			}
			sig = 0
		}
		if err := syscall.PtraceCont(pid, int(sig)); err != nil {
			t.Fatalf("ptrace: %v", err)
		}
	}
}

// vmHWM is the VmHWM line of a /proc/<pid>/status, in KiB.
func vmHWM(t *testing.T, status string) int64 {
	t.Helper()
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM: %q", l)
			}
			return n
		}
	}
	t.Fatalf("no VmHWM in:\n%s", status)
	return 0
}
