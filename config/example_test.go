package config_test

import (
	"fmt"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/jobs"
)

// Load reads a file, checks it against probe's names (jobs.Env) and the
// environment, and fills in the defaults: a target that names no sample
// runs all three, every minute unless every says otherwise, each run 0 to
// 5 s late (jitter), within a 30 s wait for the first chunk and 5 min for
// the whole stream. The binary passes jobs.Env(os.Getenv).
func ExampleLoad() {
	getenv := func(k string) string { return map[string]string{"OPENAI_API_KEY": "sk-example"}[k] }
	c, err := config.Load("testdata/example.toml", jobs.Env(getenv))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s/%s, push to %s every %s\n", c.Region, c.Host, c.Push.URL, c.Push.Interval)
	for _, t := range c.Targets {
		where := t.URL.String()
		if t.Builtin {
			where = "the built-in target"
		}
		fmt.Printf("%s (%s, %s): samples %v, drills %v, every %s, jitter %s, timeout %s, max_stream %s\n",
			t.Name, t.Dialect, where, t.Samples, t.Drills, t.Every, t.Jitter, t.Timeout, t.MaxStream)
	}
	fmt.Printf("short budget: TFC p95 %s, gap p95 %s\n", c.Budgets["short"].TFC, c.Budgets["short"].Gap)

	_, err = config.Load("testdata/example.toml", jobs.Env(func(string) string { return "" }))
	fmt.Println(err)
	// Output:
	// eu-west/edge-1, push to http://127.0.0.1:8428/api/v1/import/prometheus every 15s
	// openai (openai-chat, https://api.openai.com): samples [short long cancel], drills [], every 5m0s, jitter 5s, timeout 30s, max_stream 5m0s
	// events (sse, the built-in target): samples [], drills [drop stale], every */10 * * * *, jitter 0s, timeout 30s, max_stream 5m0s
	// short budget: TFC p95 600ms, gap p95 300ms
	// testdata/example.toml:13: target[0].bearer_env: environment variable OPENAI_API_KEY is not set
}
