package daemon

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/metricnames"
)

// promtool is Debian's promtool (the prometheus package), which CI must
// have (.ci/run installs it).
func promtool(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is missing and CI must run this test (.ci/run installs Debian's prometheus)")
		}
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	return bin
}

// checkExposition runs promtool check metrics on an exposition, and
// checks that every sample's family has its # HELP and # TYPE before it,
// once, with the type metricnames.Families gives (a vmrange histogram's
// _bucket, _sum and _count: untyped, each its own).
func checkExposition(t *testing.T, promtool string, text string, vmrange bool) {
	t.Helper()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	helped, typed := map[string]bool{}, map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if f, ok := strings.CutPrefix(l, "# HELP "); ok {
			name, help, _ := strings.Cut(f, " ")
			if helped[name] || help == "" {
				t.Errorf("HELP of %s twice or empty: %q", name, l)
			}
			helped[name] = true
			continue
		}
		if f, ok := strings.CutPrefix(l, "# TYPE "); ok {
			name, typ, _ := strings.Cut(f, " ")
			typed[name] = typ
			continue
		}
		name := sampleName([]byte(l))
		fam, f, ok := familyOf(name)
		if !ok {
			t.Errorf("a sample of no known family (add it to metricnames.Families): %s", l)
			continue
		}
		want := f.Type
		if want == "histogram" && vmrange {
			fam, want = name, "untyped"
		}
		if !helped[fam] || typed[fam] != want {
			t.Errorf("%s: family %s has HELP %t, TYPE %q before it, want %q", name, fam, helped[fam], typed[fam], want)
		}
	}
}

// /metrics of a real daemon, scraped as Prometheus would (nothing is
// pushed: le histograms by default), passes promtool check metrics: a
// # HELP and # TYPE for every family; and every job that ran has its
// streamprobe_last_success (1 for a run that passed, 0 for one that
// failed) beside its last run's time. With a push URL the histograms are
// vmrange, untyped as VictoriaMetrics types them.
func TestMetricsPassPromtool(t *testing.T) {
	promtool := promtool(t)
	srv500 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "backend down", http.StatusInternalServerError)
	}))
	defer srv500.Close()
	addr := freeAddr(t)
	d, _ := testDaemon(t, fmt.Sprintf(`listen = %q
[[target]]
name = "ref"
builtin = true
dialect = "openai-chat"
samples = ["short"]
every = "1h"
jitter = "0s"
[[target]]
name = "ref-sse"
builtin = true
dialect = "sse"
samples = []
drills = ["drop"]
drill_every = "1h"
jitter = "0s"
end_data = "[DONE]"
[[target]]
name = "broken"
url = "%s/v1"
dialect = "openai-chat"
samples = ["short"]
every = "1h"
jitter = "0s"
[budget.short]
tfc = "60s"
[slo.short]
tfc_within = 0.99
`, addr, srv500.URL), nil)
	d.Metrics.ConfigFromURL() // the fetch series, as a config from a URL has them
	defer runDaemon(t, d, nil)()
	waitFor(t, "a run of each job", 60*time.Second, func() bool {
		return runsOf(d, "ref") == 1 && runsOf(d, "ref-sse") == 1 && runsOf(d, "broken") == 1
	})
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	checkExposition(t, promtool, text, false)
	if !strings.Contains(text, "# TYPE streamprobe_tfc_seconds histogram\n") || !strings.Contains(text, `le="0.005"`) || strings.Contains(text, "vmrange") {
		t.Errorf("with nothing pushed, want le histograms:\n%s", text)
	}
	for job, want := range map[string]string{`target="ref",sample="short"`: "1", `target="broken",sample="short"`: "0", `target="ref-sse",sample="long",dialect="sse",drill="drop"`: "1"} {
		re := regexp.MustCompile(`(?m)^` + metricnames.LastSuccess + `\{[^}]*` + regexp.QuoteMeta(job) + `[^}]*\} (\S+)$`)
		if m := re.FindStringSubmatch(text); m == nil || m[1] != want {
			t.Errorf("%s of %s: %v, want %s", metricnames.LastSuccess, job, m, want)
		}
		re = regexp.MustCompile(`(?m)^` + metricnames.LastRun + `\{[^}]*` + regexp.QuoteMeta(job) + `[^}]*\} (\S+)$`)
		if m := re.FindStringSubmatch(text); m == nil || m[1] == "0" {
			t.Errorf("%s of %s: %v, want its time", metricnames.LastRun, job, m)
		}
	}

	// vmrange (a push URL's default): still HELP and TYPE, a histogram's
	// parts untyped.
	vm, _ := testDaemon(t, "[push]\nurl = \"http://127.0.0.1:9/api/v1/import/prometheus\"\n[[target]]\nname = \"t\"\nurl = \"http://x\"\n", nil)
	vm.Metrics.Observe(runChunks(t, 5))
	var out bytes.Buffer
	vm.Metrics.WriteExposition(&out)
	if !strings.Contains(out.String(), "vmrange=") {
		t.Fatalf("with a push URL, want vmrange histograms:\n%s", out.String())
	}
	checkExposition(t, promtool, out.String(), true)
}
