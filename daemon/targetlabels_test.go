package daemon

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
	"github.com/streamprobe/streamprobe/probe"
)

// A target's [target.labels] are on its series, merged over [labels]
// (its value where both set a key, each label once); another target's
// series keep the config's labels alone; a reload that changes a
// target's labels makes its series again with the new ones.
func TestTargetLabelsOnSeries(t *testing.T) {
	text := func(pop string) string {
		return "region = \"eu\"\nhost = \"h1\"\n[labels]\nteam = \"a\"\nenv = \"prod\"\n" +
			"[[target]]\nname = \"own\"\nurl = \"http://x\"\nsamples = [\"short\"]\n[target.labels]\nenv = \"canary\"\npop = \"" + pop + "\"\n" +
			"[[target]]\nname = \"plain\"\nurl = \"http://y\"\nsamples = [\"short\"]\n"
	}
	m := (*Metrics)(nil)
	for _, pop := range []string{"fra", "ams"} {
		cfg, err := config.Parse("m.toml", []byte(text(pop)), jobs.Env(os.Getenv))
		if err != nil {
			t.Fatal(err)
		}
		js, err := jobs.Build(cfg, "", os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		if m == nil {
			m = NewMetrics(cfg)
		}
		m.Reconfigure(cfg, js)
		tfc := 412.0
		for _, target := range []string{"own", "plain"} {
			m.Observe(probe.Record{Target: target, Sample: "short", Dialect: "sse", Drill: probe.DrillNone, Outcome: probe.Success, TFCMs: &tfc})
		}
		var out bytes.Buffer
		m.Set.WritePrometheus(&out)
		ownWant := `region="eu",host="h1",env="canary",pop="` + pop + `",team="a",target="own"`
		plainWant := `region="eu",host="h1",env="prod",team="a",target="plain"`
		if !strings.Contains(out.String(), "streamprobe_last_run_timestamp_seconds{"+ownWant) && !strings.Contains(out.String(), ownWant) {
			t.Errorf("pop=%s: no series of own with %s:\n%s", pop, ownWant, out.String())
		}
		if !strings.Contains(out.String(), plainWant) {
			t.Errorf("pop=%s: no series of plain with %s", pop, plainWant)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, `target="own"`) && (strings.Contains(line, `env="prod"`) || strings.Count(line, "env=") != 1) {
				t.Errorf("pop=%s: own's series keeps the config's env: %s", pop, line)
			}
			if pop == "ams" && strings.Contains(line, `pop="fra"`) {
				t.Errorf("after the reload a series keeps the old label: %s", line)
			}
		}
	}
}
