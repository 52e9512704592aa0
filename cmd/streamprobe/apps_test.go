package main

import (
	"strings"
	"testing"
)

// check covers the application resumes: a resumable AI SDK route on the
// built-in target passes its drop and stale drills (a replay from the
// start, 204 for an unknown chat), a LangGraph run made without
// stream_resumable fails its drop drill (missed: the rejoin lost events),
// and the card says so.
func TestCheckAppResumes(t *testing.T) {
	cfg := `[[target]]
name = "chat"
builtin = true
dialect = "ai-sdk-ui"
resumable = true
samples = ["short"]
drills = ["drop", "stale"]
[[target]]
name = "graph"
builtin = true
dialect = "langgraph"
stream_resumable = false
samples = ["short"]
drills = ["drop"]
[budget.short]
tfc = "10s"
gap = "5s"
` + noStallBudget
	code, stdout, stderr := runCmd(t, "check", "-config", writeConfig(t, cfg), "-runs", "2")
	if code != exitFail {
		t.Fatalf("exit %d, want 1 (the LangGraph rejoin loses events)\n%s\n%s", code, stdout, stderr)
	}
	chat, graph, _ := strings.Cut(stdout, "target graph\n")
	for _, want := range []string{"target chat\n", "replayed the answer from its start", "STALE_OK"} {
		if !strings.Contains(chat, want) {
			t.Errorf("the chat card lacks %q:\n%s", want, chat)
		}
	}
	if !strings.Contains(graph, "MISSED") || !strings.Contains(graph, "resume skipped") {
		t.Errorf("the graph card:\n%s", graph)
	}
}
