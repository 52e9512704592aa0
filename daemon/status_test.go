package daemon

import (
	"context"
	"fmt"
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

	"github.com/streamprobe/streamprobe/internal/chromiumtest"
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
	dom := chromiumtest.DumpDOM(t, "http://"+addr+"/")
	if !strings.Contains(dom, `data-rendered="1"`) {
		t.Fatalf("the page's script did not run in the browser:\n%.500s", dom)
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
