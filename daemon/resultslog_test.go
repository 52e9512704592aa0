package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/refserver"
)

// testLine is a record-like JSON line of exactly 100 bytes.
func testLine(i int) []byte {
	b, _ := json.Marshal(map[string]string{"n": fmt.Sprintf("%04d", i), "pad": strings.Repeat("x", 100-len(`{"n":"0000","pad":""}`)-1)})
	return append(b, '\n')
}

// parseLines fails on any line that is not whole JSON, and returns the
// number of lines.
func parseLines(t *testing.T, b []byte) int {
	t.Helper()
	n := 0
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		n++
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d is not JSON (%v): %q", n, err, sc.Text())
		}
	}
	return n
}

// The file size limit (RLIMIT_FSIZE) makes the kernel stop a write part
// way, as a full disk does: the child process writes 10 lines of 100 bytes
// under a 350-byte limit. The file keeps the 3 whole lines and no piece
// of the 4th; every later write fails whole.
func TestResultsLogShortWriteLeavesNoPartialLine(t *testing.T) {
	if path := os.Getenv("STREAMPROBE_FSIZE_CHILD"); path != "" {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 350, Max: 350}); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(3)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		var errs, partial atomic.Int64
		l := newResultsLog(16, func(err error) {
			errs.Add(1)
			if strings.Contains(err.Error(), "partial line") {
				partial.Add(1)
			}
			if !errors.Is(err, syscall.EFBIG) {
				fmt.Println("unexpected error:", err)
			}
		}, func() {})
		l.swap(f)
		for i := range 10 {
			l.add(testLine(i))
		}
		l.close()
		fmt.Printf("errors=%d partial=%d\n", errs.Load(), partial.Load())
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "results.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestResultsLogShortWriteLeavesNoPartialLine$")
	cmd.Env = append(os.Environ(), "STREAMPROBE_FSIZE_CHILD="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "errors=7 partial=0") {
		t.Errorf("child wrote: %s", out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := parseLines(t, b); n != 3 || len(b) != 300 {
		t.Errorf("%d lines, %d bytes; want the 3 whole lines that fit under the limit, 300 bytes", n, len(b))
	}
}

// A results log that does not keep up (here a pipe nobody reads, which
// blocks for real once its buffer is full) never blocks the caller: the
// records beyond the queue are dropped and counted, and every line that
// did get through is whole.
func TestResultsLogDropsWhenTheDiskDoesNotKeepUp(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var dropped atomic.Int64
	l := newResultsLog(8, func(err error) { t.Errorf("write error: %v", err) }, func() { dropped.Add(1) })
	l.swap(w)
	// A Linux pipe holds 64 KiB: 655 lines of 100 bytes fill it, 8 wait
	// in the queue, one is in the blocked write; the rest are dropped.
	const total = 2000
	for i := range total {
		l.add(testLine(i))
	}
	if dropped.Load() == 0 {
		t.Fatal("nothing was dropped: the test did not block the writer")
	}
	got := make(chan []byte)
	go func() {
		var all []byte
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			all = append(all, buf[:n]...)
			if err != nil {
				got <- all
				return
			}
		}
	}()
	l.close() // drains the queue into the pipe, then closes w
	b := <-got
	n := parseLines(t, b)
	if int64(n)+dropped.Load() != total {
		t.Errorf("%d lines written + %d dropped != %d added", n, dropped.Load(), total)
	}
	t.Logf("%d written, %d dropped", n, dropped.Load())
}

// Large records are bounded by bytes too: with the writer blocked, no more
// than the byte budget waits in memory.
func TestResultsLogQueueIsBoundedInBytes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var dropped atomic.Int64
	l := newResultsLog(1024, func(err error) {}, func() { dropped.Add(1) })
	l.maxBytes = 4 << 20
	l.swap(w)
	line := append(bytes.Repeat([]byte("x"), 1<<20-1), '\n') // 1 MiB records
	for range 40 {
		l.add(line)
	}
	if q := l.queued.Load(); q > l.maxBytes {
		t.Errorf("%d bytes queued, over the budget of %d", q, l.maxBytes)
	}
	if dropped.Load() < 30 {
		t.Errorf("only %d of 40 MiB-records dropped with a blocked writer and a 4 MiB budget", dropped.Load())
	}
	go io.Copy(io.Discard, r)
	l.close()
}

// run makes a results log's missing directory (mode 0750 less the umask)
// and logs into it: the packaged config's /var/lib/streamprobe, by hand
// with no systemd StateDirectory to make it.
func TestResultsLogDirectoryMade(t *testing.T) {
	srv := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "var", "lib", "streamprobe")
	log := filepath.Join(dir, "results.jsonl")
	d, _ := testDaemon(t, fmt.Sprintf("results_log = %q\n", log)+scheduleConf(srv.URL, "a", "1h"), nil)
	stop := runDaemon(t, d, nil)
	waitFor(t, "the first record in the results log", 30*time.Second, func() bool {
		b, _ := os.ReadFile(log)
		return bytes.Contains(b, []byte(`"target":"a"`))
	})
	stop()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode&^config.LogDirMode != 0 || mode&0o700 != 0o700 {
		t.Errorf("results log directory mode %o, want %o less the umask", mode, config.LogDirMode)
	}
}

// A FIFO where the results log goes is refused, never opened for a write
// that blocks until a reader comes: validate refuses it (file:line:key);
// planted at a rotation, after the config was read, the reload fails at
// once, naming it, while runs go on and a stop still stops the daemon
// (it hung in os.OpenFile on its main loop, SIGTERM ignored).
func TestResultsLogFIFORefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o640); err != nil {
		t.Skip("no FIFO here:", err)
	}
	_, err := config.Parse("f.toml", []byte(fmt.Sprintf("results_log = %q\n[[target]]\nname = \"a\"\nurl = \"http://x\"\n", fifo)), jobs.Env(nil))
	if want := "f.toml:1: results_log: " + fifo + " is a FIFO, not a regular file: the results log must be a file the daemon can append to and reopen"; err == nil || err.Error() != want {
		t.Errorf("validate:\n got %v\nwant %s", err, want)
	}

	srv := refserver.NewServer(refserver.Events(refserver.Ms(5, 10), -1))
	defer srv.Close()
	results := filepath.Join(dir, "results.jsonl")
	conf := fmt.Sprintf("results_log = %q\n[[target]]\nname = \"a\"\nurl = %q\nend_data = \"\"\nsamples = [\"short\"]\nevery = \"200ms\"\njitter = \"0s\"\n", results, srv.URL)
	d, logs := testDaemon(t, conf, nil)
	reload := make(chan *config.Config)
	stop := runDaemon(t, d, reload)
	waitFor(t, "a record in the results log", 20*time.Second, func() bool {
		b, _ := os.ReadFile(results)
		return len(b) > 0
	})
	nc := reloadConf(t, conf) // read while the log is still a file
	if err := os.Remove(results); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(results, 0o640); err != nil {
		t.Fatal(err)
	}
	sent := make(chan struct{})
	go func() { reload <- nc; close(sent) }()
	waitFor(t, "the reload refused", 10*time.Second, func() bool {
		return strings.Contains(logs.String(), "reload failed") && strings.Contains(logs.String(), "not a regular file")
	})
	<-sent
	runs := strings.Count(logs.String(), `"msg":"run"`)
	waitFor(t, "runs after the refused reload", 20*time.Second, func() bool { return strings.Count(logs.String(), `"msg":"run"`) > runs })
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not stop")
	}
}

// A results log that cannot be written (a full disk: here a file that
// refuses writes) makes /healthz unhealthy and says why, while the errors
// count in streamprobe_results_log_errors_total; a write that works again
// makes it healthy.
func TestHealthNamesAFailingResultsLog(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results.jsonl")
	d, _ := testDaemon(t, fmt.Sprintf("results_log = %q\n[[target]]\nname = \"a\"\nurl = \"http://127.0.0.1:1\"\nsamples = [\"short\"]\nevery = \"1h\"\n", results), nil)
	d.results = newResultsLog(8, d.resultsLogFailed, d.resultsLogDropped)
	defer d.results.close()
	ro, err := os.Open(os.DevNull) // read-only: every write fails, as on a full disk
	if err != nil {
		t.Fatal(err)
	}
	d.results.swap(ro)
	d.results.add([]byte("{}\n"))
	waitFor(t, "the failed write", 10*time.Second, func() bool { failing, _, _ := d.results.failing(); return failing })
	h := d.health(time.Now())
	if h.Status != "unhealthy" || len(h.Reasons) != 1 || !strings.Contains(h.Reasons[0], "results log writes fail since") {
		t.Errorf("health %+v", h)
	}
	f, err := config.OpenLog(results)
	if err != nil {
		t.Fatal(err)
	}
	d.results.swap(f)
	d.results.add([]byte("{}\n"))
	waitFor(t, "a write that works", 10*time.Second, func() bool { failing, _, _ := d.results.failing(); return !failing })
	if h := d.health(time.Now()); h.Status != "ok" {
		t.Errorf("health after a good write: %+v", h)
	}
}
