// Package vmtest runs Debian's VictoriaMetrics binaries (the package
// victoria-metrics: victoria-metrics, vmagent, vmalert) on loopback for
// tests, each in a temporary directory, stopped in t.Cleanup, with the
// queries tests make. It is a test helper, internal to streamprobe.
package vmtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/tools"
)

// StartTimeout bounds the wait for a started binary to answer /health.
const StartTimeout = 60 * time.Second

// Bin returns the path of one of the package's binaries (victoria-metrics,
// vmagent, vmalert), skipping the test when it is missing, unless CI is
// set: then the test fails (.ci/run installs the package).
func Bin(t testing.TB, name string) string {
	t.Helper()
	return tools.Need(t, "victoria-metrics", name)
}

// VM is a VictoriaMetrics single node on loopback: no query cache, no
// latency offset, so a sample is visible as soon as it is flushed.
type VM struct {
	// Addr is host:port, URL http://Addr, Dir its storage.
	Addr, URL, Dir string

	bin string
	p   *process
}

// Start starts VictoriaMetrics on a free loopback port and a temporary
// directory, waits until it is healthy, and stops it in t.Cleanup.
func Start(t testing.TB) *VM {
	t.Helper()
	vm := &VM{bin: Bin(t, "victoria-metrics"), Dir: t.TempDir()}
	var err error
	// A free port can be taken between the probe for it and the bind:
	// try a few.
	for range 3 {
		vm.Addr = freeAddr(t)
		vm.URL = "http://" + vm.Addr
		if vm.p, err = vm.start(t); err == nil {
			return vm
		}
	}
	t.Fatal(err)
	return nil
}

func (vm *VM) start(t testing.TB) (*process, error) {
	return start(t, vm.URL, vm.bin, "-httpListenAddr="+vm.Addr, "-storageDataPath="+vm.Dir,
		"-search.latencyOffset=0s", "-search.disableCache", "-loggerLevel=ERROR")
}

// Restart starts VictoriaMetrics again on the same address and directory,
// after Stop (the end of an outage).
func (vm *VM) Restart(t testing.TB) {
	t.Helper()
	var err error
	if vm.p, err = vm.start(t); err != nil {
		t.Fatal(err)
	}
}

// Stop stops VictoriaMetrics (an outage, or the end of the test) and waits
// for it to exit; the data stays in Dir. It does nothing when stopped.
func (vm *VM) Stop() {
	if vm.p != nil {
		vm.p.stop()
		vm.p = nil
	}
}

// ImportURL is where the Prometheus text format is pushed.
func (vm *VM) ImportURL() string { return vm.URL + "/api/v1/import/prometheus" }

// Sample is one series of an instant query's result.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Flush makes what VictoriaMetrics took so far searchable.
func (vm *VM) Flush() {
	if resp, err := http.Get(vm.URL + "/internal/force_flush"); err == nil {
		resp.Body.Close()
	}
}

// Query flushes, then runs an instant query now.
func (vm *VM) Query(t testing.TB, q string) []Sample {
	t.Helper()
	return vm.QueryAt(t, q, time.Time{})
}

// QueryAt flushes, then runs an instant query at a time (now when zero).
// A query VictoriaMetrics refuses fails the test.
func (vm *VM) QueryAt(t testing.TB, q string, at time.Time) []Sample {
	t.Helper()
	vm.Flush()
	u := vm.URL + "/api/v1/query?query=" + url.QueryEscape(q)
	if !at.IsZero() {
		u += fmt.Sprintf("&time=%.3f", float64(at.UnixMilli())/1000)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	if out.Status != "success" {
		t.Fatalf("query %s: %s", q, out.Error)
	}
	var res []Sample
	for _, r := range out.Data.Result {
		v, _ := strconv.ParseFloat(fmt.Sprint(r.Value[1]), 64)
		res = append(res, Sample{r.Metric, v})
	}
	return res
}

// Agent is a vmagent on loopback that takes pushes and forwards them by
// remote write, buffering on disk while the remote is down.
type Agent struct {
	// Addr is host:port, URL http://Addr, Dir its buffer.
	Addr, URL, Dir string
}

// StartAgent starts vmagent forwarding to vm (flushing every second),
// waits until it is healthy, and stops it in t.Cleanup. Its log is
// discarded: it logs every failed send while vm is down.
func StartAgent(t testing.TB, vm *VM) *Agent {
	t.Helper()
	bin := Bin(t, "vmagent")
	a := &Agent{Dir: t.TempDir()}
	var err error
	for range 3 {
		a.Addr = freeAddr(t)
		a.URL = "http://" + a.Addr
		var p *process
		if p, err = start(t, a.URL, bin, "-httpListenAddr="+a.Addr, "-remoteWrite.url="+vm.URL+"/api/v1/write",
			"-remoteWrite.tmpDataPath="+a.Dir, "-remoteWrite.flushInterval=1s", "-loggerLevel=ERROR"); err == nil {
			p.quiet = true
			return a
		}
	}
	t.Fatal(err)
	return nil
}

// ImportURL is where the Prometheus text format is pushed.
func (a *Agent) ImportURL() string { return a.URL + "/api/v1/import/prometheus" }

// Metric reads one of vmagent's own metrics, summed over its series.
func (a *Agent) Metric(t testing.TB, name string) float64 {
	t.Helper()
	resp, err := http.Get(a.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// process is one started binary. Its output goes to log, read once it
// has exited (exec.Cmd writes one stream at a time to a shared writer).
type process struct {
	cmd   *exec.Cmd
	done  chan struct{}
	log   bytes.Buffer
	quiet bool // keep its log out of a failed test's output
	once  sync.Once
}

// start runs bin with args, and waits until base/health answers 200; it
// stops it in t.Cleanup. A binary that exits first, or is not healthy
// within StartTimeout, is an error with what it logged.
func start(t testing.TB, base, bin string, args ...string) (*process, error) {
	p := &process{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		if s := strings.TrimSpace(p.log.String()); s != "" && t.Failed() && !p.quiet {
			t.Logf("%s said: %s", bin, s)
		}
	})
	if err := p.waitHealthy(base); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s: %w: %s", bin, err, strings.TrimSpace(p.log.String()))
	}
	return p, nil
}

func (p *process) waitHealthy(base string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(StartTimeout); time.Now().Before(deadline); {
		select {
		case <-p.done:
			return errors.New("exited before it was healthy")
		default:
		}
		if resp, err := client.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not healthy within %v", StartTimeout)
}

// stop interrupts the process (a clean shutdown that flushes its data),
// kills it if it has not exited within 30 s, and waits for it.
func (p *process) stop() {
	p.once.Do(func() {
		p.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	})
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
