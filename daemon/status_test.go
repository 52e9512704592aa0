package daemon

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/internal/testenv/chromiumtest"
	"github.com/streamprobe/streamprobe/scorecard"
)

// The status page on the listen address, read over HTTP and rendered by
// headless Chromium: per job the last 10 runs (of more), the outcome and
// verdict, the latest run's timeline with a tick per chunk, the last
// error, when the config was loaded; and neither the key the targets
// were sent (one of them echoes it back in its error body) nor a word of
// the streamed content.
func TestStatusPageInChromium(t *testing.T) {
	chromiumtest.Bin(t)
	const key = "sk-status-page-secret-0123456789abcdef"
	const content = "ZEBRA-CONTENT-77"
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/bad") { // a base URL: the dialect appends its path
			http.Error(w, "invalid key "+r.Header.Get("Authorization"), http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for i := range 6 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s %d \"}}]}\n\n", content, i)
			f.Flush()
			time.Sleep(20 * time.Millisecond)
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		f.Flush()
	}))
	defer target.Close()
	addr := freeAddr(t)
	results := filepath.Join(t.TempDir(), "results.jsonl")
	d, _ := testDaemon(t, fmt.Sprintf(`region = "eu-west"
host = "edge-7"
listen = %q
results_log = %q
[[target]]
name = "chat"
url = "%s/ok"
dialect = "openai-chat"
bearer_env = "TEST_KEY"
samples = ["short"]
every = "200ms"
jitter = "0s"
[[target]]
name = "denied"
url = "%s/bad"
dialect = "openai-chat"
bearer_env = "TEST_KEY"
samples = ["short"]
every = "1s"
jitter = "0s"
[[target]]
name = "ref-sse"
builtin = true
dialect = "sse"
samples = []
drills = ["drop"]
drill_every = "1s"
jitter = "0s"
[budget.short]
tfc = "60s"
gap = "60s"
`, addr, results, target.URL, target.URL), map[string]string{"TEST_KEY": key})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	count := func(target string) int {
		b, _ := os.ReadFile(results)
		return strings.Count(string(b), `"target":"`+target+`"`)
	}
	waitFor(t, "12 chat runs, a denied run and a drill run", 60*time.Second, func() bool {
		return count("chat") >= 12 && count("denied") >= 1 && count("ref-sse") >= 1
	})
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	for _, secret := range []string{key, "0123456789abcdef", content} {
		if strings.Contains(page, secret) {
			t.Errorf("the status page contains %q", secret)
		}
	}
	if resp, err := hc.Get("http://" + addr + "/nothing-here"); err != nil || resp.StatusCode != 404 {
		t.Errorf("GET /nothing-here: %v, want 404", err)
	} else {
		resp.Body.Close()
	}
	for _, want := range []string{"streamprobe on edge-7 (region eu-west)", "Config <code>test.toml</code> loaded ",
		`data-target="chat" data-sample="short" data-drill="none" data-runs="10"`,
		`data-target="ref-sse" data-sample="long" data-drill="drop"`, "Last error", "401"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	section := func(target string) string {
		i := strings.Index(page, `data-target="`+target+`"`)
		if i < 0 {
			t.Fatalf("no section for %s", target)
		}
		s := page[i:]
		return s[:strings.Index(s, "</section>")]
	}
	if n := strings.Count(section("chat"), `<tr class="run">`); n != statusRuns {
		t.Errorf("chat: %d runs listed, want the last %d", n, statusRuns)
	}
	if !strings.Contains(section("denied"), "upstream_error") || strings.Contains(section("denied"), "<svg") {
		t.Errorf("denied: want upstream_error and no timeline:\n%s", section("denied"))
	}
	if !regexp.MustCompile(`<td>(pass|[a-z_]+)</td>`).MatchString(section("ref-sse")) {
		t.Errorf("the drill's verdict is not listed:\n%s", section("ref-sse"))
	}

	// In the browser: the page's script ran, and each timeline drew one
	// tick per chunk of its run (the chat target sends 6).
	dom, console := chromiumtest.DumpDOMConsole(t, "http://"+addr+"/")
	if !strings.Contains(dom, `data-rendered="1"`) {
		t.Fatalf("the page's script did not run in the browser:\n%.500s", dom)
	}
	if len(console) > 0 {
		t.Errorf("the page wrote to the browser's console: %q", console)
	}
	// The summary line is laid out with a height and text (the page's
	// script marks it so), and names the class that fails.
	if m := regexp.MustCompile(`<p id="summary"[^>]*data-shown="1"[^>]*>([^<]*)</p>`).FindStringSubmatch(dom); m == nil ||
		!strings.Contains(m[1], "of 2 classes PASS") || !strings.Contains(m[1], "FAIL: ") || !strings.Contains(m[1], "denied short") {
		t.Errorf("no visible summary line naming the failing class: %q", m)
	}
	svgs := regexp.MustCompile(`<svg class="timeline"[^>]*>`).FindAllString(dom, -1)
	if len(svgs) != 2 {
		t.Fatalf("%d timelines, want the chat run's and the drill run's", len(svgs))
	}
	attr := func(tag, name string) int {
		m := regexp.MustCompile(name + `="(\d+)"`).FindStringSubmatch(tag)
		if m == nil {
			return -1
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if attr(svgs[0], "data-chunks") != 6 {
		t.Errorf("the chat timeline has %d chunks, want 6: %s", attr(svgs[0], "data-chunks"), svgs[0])
	}
	for _, s := range svgs {
		if attr(s, "data-ticks-rendered") != attr(s, "data-chunks") || attr(s, "data-chunks") < 1 {
			t.Errorf("timeline drawn with %d ticks for %d chunks: %s", attr(s, "data-ticks-rendered"), attr(s, "data-chunks"), s)
		}
	}
	png := chromiumtest.Screenshot(t, "http://"+addr+"/", 1100, 1300, 10000)
	// STATUS_PAGE_SHOT=../docs/status-page.png refreshes the shot in
	// docs/metrics-and-alerts.md "The status page".
	if out := os.Getenv("STATUS_PAGE_SHOT"); out != "" {
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// statusSection is one job's section of the status page, as the page
// says it: its verdict, its runs, and the request ids it lists.
type statusSection struct {
	target, sample, drill, verdict string
	runs                           int
	ids                            []string
	html                           string
}

var sectionRE = regexp.MustCompile(`(?s)<section class="job" data-target="([^"]*)" data-sample="([^"]*)" data-drill="([^"]*)" data-runs="(\d+)" data-verdict="([^"]*)">(.*?)</section>`)

func statusSections(t *testing.T, page string) map[string]statusSection {
	t.Helper()
	out := map[string]statusSection{}
	for _, m := range sectionRE.FindAllStringSubmatch(page, -1) {
		n, _ := strconv.Atoi(m[4])
		s := statusSection{target: m[1], sample: m[2], drill: m[3], runs: n, verdict: m[5], html: m[6]}
		for _, id := range regexp.MustCompile(`<tr class="run">.*?<code>([0-9a-f]*)</code>`).FindAllStringSubmatch(m[6], -1) {
			s.ids = append(s.ids, id[1])
		}
		out[s.target+"/"+s.sample+"/"+s.drill] = s
	}
	return out
}

// The status page's class verdicts are check's on the same runs: a
// daemon on the built-in reference target, with a budget the short class
// must fail (TFC 1 ms, where the reference sends its first chunk after
// about 400 ms) and budgets the long and cancel classes meet however busy
// the machine (60 s, any share stalled), and a target that answers 500.
// The runs each section lists are taken from the results log (what
// check's -runs would have measured) and judged by scorecard.Cards, the
// code check judges with: every section's verdict, run count and reasons
// are that card's. The cancel sample's own cancel is no error on the
// page; the 500 is. With no push configured the page says push disabled.
func TestStatusPageVerdictsAreChecks(t *testing.T) {
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "backend down", http.StatusInternalServerError)
	}))
	defer broken.Close()
	addr := freeAddr(t)
	results := filepath.Join(t.TempDir(), "results.jsonl")
	d, _ := testDaemon(t, fmt.Sprintf(`region = "eu-west"
host = "edge-7"
listen = %q
results_log = %q
[[target]]
name = "ref"
builtin = true
dialect = "openai-chat"
samples = ["short", "long", "cancel"]
every = "4s"
jitter = "0s"
timeout = "3s"
[[target]]
name = "broken"
url = "%s/v1"
dialect = "openai-chat"
samples = ["short"]
every = "4s"
jitter = "0s"
timeout = "3s"
[target.budget.short]
tfc = "20s"
[budget.short]
tfc = "1ms"
[budget.long]
tfc = "60s"
gap = "60s"
tail = "60s"
stall_share = 1.0
[budget.cancel]
tfc = "60s"
gap = "60s"
stall_share = 1.0
`, addr, results, broken.URL), nil)
	stop := runDaemon(t, d, nil)
	defer stop()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var page string
	var secs map[string]statusSection
	waitFor(t, "2 runs of every job on the page", 120*time.Second, func() bool {
		resp, err := hc.Get("http://" + addr + "/")
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page, secs = string(b), statusSections(t, string(b))
		if len(secs) != 4 {
			return false
		}
		for _, s := range secs {
			if s.runs < 2 {
				return false
			}
		}
		return true
	})
	// The page's runs, from the results log (written after the page took
	// them: wait for the last of them).
	want := map[string]bool{}
	for _, s := range secs {
		if len(s.ids) != s.runs {
			t.Fatalf("%s/%s: %d runs, %d request ids listed", s.target, s.sample, s.runs, len(s.ids))
		}
		for _, id := range s.ids {
			want[id] = true
		}
	}
	runs := map[string][]scorecard.Run{}
	waitFor(t, "the page's runs in the results log", 30*time.Second, func() bool {
		clear(runs)
		n := 0
		for _, r := range readRecords(t, results) {
			if want[r.RequestID] {
				runs[r.Target] = append(runs[r.Target], scorecard.Run{Record: r})
				n++
			}
		}
		return n == len(want)
	})
	cfg := d.config()
	cards := map[string]*scorecard.Card{}
	for _, c := range scorecard.Cards(cfg, nil, runs) { // what check.go's checkCards calls
		cards[c.Target] = c
	}
	verdicts := map[string]string{}
	for key, s := range secs {
		cells := cards[s.target].ClassCells(s.sample)
		verdict, n := "PASS", 0
		for _, ce := range cells {
			if ce.Verdict == "INCONCLUSIVE" && verdict == "PASS" {
				verdict = "INCONCLUSIVE"
			}
		}
		for _, ce := range cells {
			if ce.Row == "outcomes" {
				n = ce.N
			}
			if ce.Over {
				verdict = "FAIL"
				if why := html.EscapeString(ce.Why); !strings.Contains(s.html, why) {
					t.Errorf("%s: check's reason %q is not on the page:\n%s", key, why, s.html)
				}
			}
		}
		if s.verdict != verdict || s.runs != n || len(cells) != len(scorecard.Rows) {
			t.Errorf("%s: the page says %s over %d runs, check on the same runs %s over %d (%d cells)", key, s.verdict, s.runs, verdict, n, len(cells))
		}
		verdicts[key] = s.verdict
		if !strings.Contains(s.html, ">"+s.verdict+"</span> over "+strconv.Itoa(s.runs)+" runs") {
			t.Errorf("%s: no %q heading over %d runs:\n%.600s", key, s.verdict, s.runs, s.html)
		}
	}
	// The budgets chosen far from the measured values decide these two
	// whatever the machine's load.
	if verdicts["ref/short/none"] != "FAIL" || !strings.Contains(secs["ref/short/none"].html, "TFC: p95 ") {
		t.Errorf("ref short: %s, want FAIL on TFC over the 1 ms budget", verdicts["ref/short/none"])
	}
	if !strings.Contains(secs["ref/short/none"].html, "Budgets: TFC p95 1 ms") || !strings.Contains(secs["ref/long/none"].html, "Budgets: TFC p95 60000 ms, gap p95 60000 ms, tail p95 60000 ms, stalled &gt;250ms at most 100% of runs") {
		t.Errorf("budgets not shown:\n%s\n%s", secs["ref/short/none"].html, secs["ref/long/none"].html)
	}
	for _, ce := range cards["ref"].ClassCells("long") {
		if ce.Over && ce.Timing != nil {
			t.Errorf("ref long: a timing cell over a 60 s budget: %+v", ce)
		}
	}
	if verdicts["broken/short/none"] != "FAIL" {
		t.Errorf("broken short: %s, want FAIL", verdicts["broken/short/none"])
	}
	// The broken target's own budget ([target.budget.short]) is the one
	// the page shows and judges with.
	if !strings.Contains(secs["broken/short/none"].html, "Budgets: TFC p95 20000 ms") {
		t.Errorf("broken short: not its own budget:\n%s", secs["broken/short/none"].html)
	}
	// The cancel sample's intended end is listed, not as an error; the
	// 500 is the broken target's last error.
	cancel := secs["ref/cancel/none"].html
	if !strings.Contains(cancel, `<td class="end">cancelled by the cancel sample after 3 content chunks</td>`) ||
		strings.Contains(cancel, "Last error") || strings.Contains(cancel, `class="err"`) || strings.Contains(cancel, `class="last-error"`) {
		t.Errorf("the cancel sample's cancel is shown as an error, or not at all:\n%s", cancel)
	}
	if b := secs["broken/short/none"].html; !strings.Contains(b, `<p class="last-error">Last error`) || !strings.Contains(b, `<td class="err">`) || !strings.Contains(b, "500") {
		t.Errorf("the broken target's 500 is not shown as an error:\n%s", b)
	}
	// The page's head: the summary, version, uptime, health, push.
	failed, undecided := 0, 0
	for _, v := range verdicts {
		switch v {
		case "FAIL":
			failed++
		case "INCONCLUSIVE":
			undecided++
		}
	}
	sum := regexp.MustCompile(`<p id="summary"[^>]*>([^<]*)</p>`).FindStringSubmatch(page)
	head := fmt.Sprintf("%d of 4 classes PASS; %d FAIL: ", 4-failed-undecided, failed)
	if sum == nil || !strings.HasPrefix(sum[1], head) || !strings.Contains(sum[1], "ref short") || !strings.Contains(sum[1], "broken short") ||
		(undecided > 0) != strings.Contains(sum[1], fmt.Sprintf("; %d INCONCLUSIVE: ", undecided)) {
		t.Errorf("summary %q, want %q naming the %d that fail, and the %d inconclusive", sum, head, failed, undecided)
	}
	for _, want := range []string{"Version <code>" + html.EscapeString(Version()) + "</code>, up ", `<span id="health" class="pass">ok</span>`,
		`<span id="push">push disabled</span>`, "next run "} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "No push yet") || strings.Contains(page, "Last push") {
		t.Error("the page speaks of pushes with no push configured")
	}
}
