package deploy

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/daemon"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/probe"
)

// verdicts returns every constant of type probe.Verdict declared in the
// probe package's source, so a verdict added later is checked here without
// a list to keep up to date.
func verdicts(t *testing.T) []probe.Verdict {
	t.Helper()
	fset := token.NewFileSet()
	files, _ := filepath.Glob("../probe/*.go")
	var out []probe.Verdict
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Verdict" {
				return true
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok {
					s, _ := strconv.Unquote(lit.Value)
					out = append(out, probe.Verdict(s))
				}
			}
			return true
		})
	}
	if !slices.Contains(out, probe.VerdictNotExercised) || !slices.Contains(out, probe.VerdictPass) {
		t.Fatalf("verdicts found in ../probe: %v", out)
	}
	return out
}

// resumeBugExpr is the StreamprobeResumeBug expression of alerts.yml.
func resumeBugExpr(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)- alert: StreamprobeResumeBug\n\s+expr: \|\n(.*?)\n\s+labels:`).FindSubmatch(b)
	if m == nil {
		t.Fatal("alerts.yml has no StreamprobeResumeBug rule with an expr block")
	}
	return string(m[1])
}

// The alert selects on the daemon's failed label, never on its own list of
// verdicts, and the daemon's label is Verdict.Failed for every verdict.
func TestResumeAlertSelectsOnTheDaemonsFailedLabel(t *testing.T) {
	expr := resumeBugExpr(t)
	if !strings.Contains(expr, `streamprobe_resume_checks_total{failed="true"}`) || strings.Contains(expr, "verdict=") {
		t.Errorf("StreamprobeResumeBug must select failed=\"true\", not a verdict list:\n%s", expr)
	}
	for _, v := range verdicts(t) {
		got := exported(t, v)
		want := `failed="` + strconv.FormatBool(v.Failed()) + `"`
		if !strings.Contains(got, want) {
			t.Errorf("verdict %s: the daemon exports %s, want %s (Failed() = %v)", v, got, want, v.Failed())
		}
	}
}

// exported returns the resume check series line the daemon writes for one
// drill run with verdict v.
func exported(t *testing.T, v probe.Verdict) string {
	t.Helper()
	cfg, err := config.Parse("a.toml", []byte("region = \"eu\"\nhost = \"h1\"\n[[target]]\nname = \"api\"\nurl = \"http://x\"\n"), jobs.Env(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	m := daemon.NewMetrics(cfg)
	m.Observe(probe.Record{Target: "api", Sample: "long", Dialect: "sse", Drill: probe.DrillDrop, Outcome: probe.Success, Verdict: v})
	var out bytes.Buffer
	m.Set.WritePrometheus(&out)
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "streamprobe_resume_checks_total{") {
			return line
		}
	}
	t.Fatalf("verdict %s: no streamprobe_resume_checks_total series:\n%s", v, out.String())
	return ""
}

// End to end with promtool: for every verdict the code knows, the series
// the daemon really exports is fed to the real alert rule, which must fire
// exactly for the verdicts whose Failed() is true.
func TestResumeAlertFiresExactlyForFailedVerdicts(t *testing.T) {
	promtool := tool(t, "promtool", "prometheus")
	rules, err := filepath.Abs("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	type series struct {
		Series string `json:"series"`
		Values string `json:"values"`
	}
	type alert struct {
		Labels      map[string]string `json:"exp_labels"`
		Annotations map[string]string `json:"exp_annotations"`
	}
	var input []series
	want := []alert{}
	for _, v := range verdicts(t) {
		line := exported(t, v)
		name, _, _ := strings.Cut(line, "} ")
		// One drill per verdict, so the alerts tell them apart.
		name = strings.Replace(name, `drill="drop"`, `drill="d-`+string(v)+`"`, 1)
		input = append(input, series{Series: name + "}", Values: "0 0 0 0 0 1 1 1 1 1"})
		if v.Failed() {
			drill := "d-" + string(v)
			want = append(want, alert{
				Labels: map[string]string{"severity": "critical", "target": "api", "region": "eu", "drill": drill, "verdict": string(v)},
				Annotations: map[string]string{
					"summary":     "Resume bug on api (eu): " + drill + " drill says " + string(v),
					"description": "A resume misbehaved (Last-Event-ID, a cursor, an application's replay or an MCP task). Run `streamprobe once -drill " + drill + "` against the target for the one-line explanation.",
				},
			})
		}
	}
	doc := map[string]any{
		"rule_files":          []string{rules},
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval":     "1m",
			"input_series": input,
			"alert_rule_test": []any{
				map[string]any{"eval_time": "4m", "alertname": "StreamprobeResumeBug", "exp_alerts": []alert{}},
				map[string]any{"eval_time": "7m", "alertname": "StreamprobeResumeBug", "exp_alerts": want},
			},
		}},
	}
	b, _ := json.Marshal(doc) // JSON is YAML: promtool reads it as is
	path := filepath.Join(t.TempDir(), "verdicts_test.yml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "test", "rules", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("the alert and Verdict.Failed disagree: promtool test rules: %v\n%s", err, out)
	}
	if len(want) < 2 {
		t.Errorf("only %d failing verdicts", len(want))
	}
}
