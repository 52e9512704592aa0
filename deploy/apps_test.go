package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/daemon"
	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/probe"
)

// A failing resume of each application resume mechanism, end to end: a
// real drill against the reference LangGraph server without
// stream_resumable (missed) and against the reference resumable AI SDK app
// that answers 204 while the answer streams (missed), each record into
// the daemon's metrics, the series it exports into promtool with the real
// alert rule: StreamprobeResumeBug fires for both, with their targets.
func TestResumeAlertFiresForTheAppResumes(t *testing.T) {
	promtool := tool(t, "promtool", "prometheus")
	cfg, err := config.Parse("a.toml", []byte("region = \"eu\"\nhost = \"h1\"\n"+
		"[[target]]\nname = \"graph\"\nurl = \"http://x\"\ndialect = \"langgraph\"\ndrills = [\"drop\"]\n"+
		"[[target]]\nname = \"chat\"\nurl = \"http://x/api/chat\"\ndialect = \"ai-sdk-ui\"\nresumable = true\ndrills = [\"drop\"]\n"), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	m := daemon.NewMetrics(cfg)
	for _, dd := range builtin.Drills() {
		if !strings.Contains(dd.Server, "without stream_resumable") && dd.Resumable != refserver.ResumableNoContentLive {
			continue
		}
		srv := refserver.NewUnstarted(nil)
		dd.Setup(srv)
		srv.Start()
		tg := dd.Target(srv.URL)
		tg.Name = map[string]string{"langgraph": "graph", "ai-sdk-ui": "chat"}[tg.Dialect]
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		rec := probe.Run(ctx, tg, probe.Options{Sample: dialect.Samples["long"], Drill: dd.Drill}).Record
		cancel()
		srv.Close()
		if rec.Verdict != probe.VerdictMissed {
			t.Fatalf("%s: verdict %s %q", dd.Server, rec.Verdict, rec.ResumeDetail)
		}
		m.Observe(rec)
	}
	var out bytes.Buffer
	m.Set.WritePrometheus(&out)
	type series struct {
		Series string `json:"series"`
		Values string `json:"values"`
	}
	var input []series
	for _, line := range strings.Split(out.String(), "\n") {
		if name, _, ok := strings.Cut(line, "} "); ok && strings.HasPrefix(line, "streamprobe_resume_checks_total{") {
			input = append(input, series{Series: name + "}", Values: "0 0 0 0 0 1 1 1 1 1"})
		}
	}
	if len(input) != 2 || !strings.Contains(out.String(), `dialect="langgraph"`) || !strings.Contains(out.String(), `dialect="ai-sdk-ui"`) {
		t.Fatalf("resume check series: %v", input)
	}
	alert := func(target string) map[string]any {
		return map[string]any{
			"exp_labels": map[string]string{"severity": "critical", "target": target, "region": "eu", "drill": "drop", "verdict": "missed"},
			"exp_annotations": map[string]string{
				"summary":     "Resume bug on " + target + " (eu): drop drill says missed",
				"description": "A resume misbehaved (Last-Event-ID, a cursor, an application's replay or an MCP task). Run `streamprobe once -drill drop` against the target for the one-line explanation.",
			},
		}
	}
	rules, _ := filepath.Abs("alerts.yml")
	doc := map[string]any{
		"rule_files": []string{rules}, "evaluation_interval": "1m",
		"tests": []any{map[string]any{"interval": "1m", "input_series": input, "alert_rule_test": []any{
			map[string]any{"eval_time": "4m", "alertname": "StreamprobeResumeBug", "exp_alerts": []any{}},
			map[string]any{"eval_time": "7m", "alertname": "StreamprobeResumeBug", "exp_alerts": []any{alert("chat"), alert("graph")}},
		}}},
	}
	b, _ := json.Marshal(doc)
	path := filepath.Join(t.TempDir(), "apps_test.yml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if o, err := exec.Command(promtool, "test", "rules", path).CombinedOutput(); err != nil || !strings.Contains(string(o), "SUCCESS") {
		t.Fatalf("promtool test rules: %v\n%s", err, o)
	}
}
