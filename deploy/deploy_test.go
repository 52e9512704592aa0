// Package deploy holds what an operator deploys beside the binary: alert
// rules and a Grafana dashboard. Its tests check them with the real tools.
package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/internal/testenv/tools"
	"github.com/streamprobe/streamprobe/internal/testenv/vmtest"
)

func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	return tools.Need(t, pkg, name)
}

func TestAlertRulesWithPromtool(t *testing.T) {
	promtool := tool(t, "promtool", "prometheus")
	if out, err := exec.Command(promtool, "check", "rules", "alerts.yml", "hosts.example.yml", "slo.yml").CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	for _, tests := range []string{"alerts_test.yml", "slo_test.yml"} {
		out, err := exec.Command(promtool, "test", "rules", tests).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Fatalf("promtool test rules %s: %v\n%s", tests, err, out)
		}
	}
}

func TestAlertRulesWithVmalert(t *testing.T) {
	vmalert := vmtest.Bin(t, "vmalert")
	out, err := exec.Command(vmalert, "-rule=alerts.yml", "-rule=hosts.example.yml", "-rule=slo.yml", "-dryRun", "-loggerLevel=ERROR").CombinedOutput()
	if err != nil {
		t.Fatalf("vmalert -dryRun: %v\n%s", err, out)
	}
}

func TestDashboardIsValidJSON(t *testing.T) {
	b, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name string `json:"name"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	titles := map[string]bool{}
	for _, p := range d.Panels {
		titles[p.Title] = true
		for _, tg := range p.Targets {
			if strings.Contains(tg.Expr, "avg(") {
				t.Errorf("panel %q averages (percentiles come from summed buckets): %s", p.Title, tg.Expr)
			}
		}
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	for _, want := range []string{"region", "host", "target", "window"} {
		if !vars[want] {
			t.Errorf("dashboard lacks the variable $%s", want)
		}
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if strings.Contains(tg.Expr, `region=~"$region"`) && (!strings.Contains(tg.Expr, `host=~"$host"`) || !strings.Contains(tg.Expr, `target=~"$target"`)) {
				t.Errorf("panel %q filters by region but not by host and target: %s", p.Title, tg.Expr)
			}
			if strings.Contains(tg.Expr, "$__rate_interval") {
				t.Errorf("panel %q aggregates over $__rate_interval (a run or two), not $window: %s", p.Title, tg.Expr)
			}
		}
	}
	for _, want := range []string{"TFC: short", "TFC: long", "TFC: cancel", "Share of runs that stalled over 250 ms", "Resume verdicts by region", "Gap p50 vs p95: short", "Failed runs by target and sample"} {
		if !titles[want] {
			t.Errorf("dashboard lacks the panel %q", want)
		}
	}
}
