package probe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/streamprobe/streamprobe/dialect"
	"github.com/streamprobe/streamprobe/internal/builtin"
	"github.com/streamprobe/streamprobe/probe"
)

// One measured request against the built-in reference target (a program
// outside this module puts a real URL and a key header in the Target
// instead: internal/builtin is the module's own).
func ExampleRun() {
	srv := builtin.NewServer()
	srv.Start()
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // the caller owns the deadline
	defer cancel()
	t := dialect.Target{Name: "api", URL: srv.URL, Dialect: "openai-chat", Model: "gpt-4o-mini"}
	s, err := dialect.LookupSample("short")
	if err != nil {
		panic(err)
	}
	res := probe.Run(ctx, t, probe.Options{Sample: s})
	r := res.Record
	fmt.Printf("%s: outcome %s, TFC %.1f ms, gap p95 %.1f ms, passed %t\n", r.Target, r.Outcome, *r.TFCMs, *r.Gaps.P95Ms, r.Passed())
	json.NewEncoder(os.Stdout).Encode(r) // the record of once -json
}
