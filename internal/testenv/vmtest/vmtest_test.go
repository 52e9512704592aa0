package vmtest

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func push(t *testing.T, url, text string) {
	t.Helper()
	resp, err := http.Post(url, "text/plain", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("push to %s: %s", url, resp.Status)
	}
}

// waitValue waits until q returns one series of value want.
func waitValue(t *testing.T, vm *VM, q string, want float64) {
	t.Helper()
	var got []Sample
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = vm.Query(t, q); len(got) == 1 && got[0].Value == want {
			return
		}
	}
	t.Fatalf("%s = %+v after 60 s, want one series of %v", q, got, want)
}

// A sample pushed to VictoriaMetrics is there after a stop and a restart
// on the same address; one pushed to vmagent reaches it by remote write,
// with its labels.
func TestVMAndAgent(t *testing.T) {
	vm := Start(t)
	push(t, vm.ImportURL(), "vmtest_direct{kind=\"push\"} 7\n")
	waitValue(t, vm, `vmtest_direct{kind="push"}`, 7)
	vm.Stop()
	if _, err := http.Get(vm.URL + "/health"); err == nil {
		t.Fatal("VictoriaMetrics still answers after Stop")
	}
	vm.Restart(t)
	waitValue(t, vm, `last_over_time(vmtest_direct[1h])`, 7)

	a := StartAgent(t, vm)
	push(t, a.ImportURL(), "vmtest_agent{region=\"eu\"} 3\n")
	waitValue(t, vm, `vmtest_agent{region="eu"}`, 3)
	if got := vm.Query(t, `vmtest_agent`); len(got) != 1 || got[0].Labels["region"] != "eu" {
		t.Errorf("labels %+v", got)
	}
	if n := a.Metric(t, "vmagent_rows_inserted_total"); n < 1 {
		t.Errorf("vmagent_rows_inserted_total = %v, want the pushed row", n)
	}
}
