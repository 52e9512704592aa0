package builtin

import (
	"slices"
	"strings"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/refserver"
)

// Needed reports whether a target of c runs against the built-in
// reference target.
func Needed(c *config.Config) bool {
	return slices.ContainsFunc(c.Targets, func(t config.Target) bool { return t.Builtin })
}

// New returns the built-in reference target, unstarted, as every command
// runs it: the server of NewServer, keeping the last 16 connections for
// the status of its own tests.
func New() *refserver.Server {
	srv := NewServer()
	srv.KeepConns = 16
	return srv
}

// URL is the URL a target of dialect probes on the built-in
// reference target served at base: the generic sse dialect reads the
// resumable drill stream on /events, mcp the MCP server on /mcp, text the
// plain-text route, the Vertex AI dialects a project's location, the API
// dialects their API paths. slowdown (0 or 1: none) asks for the streams
// that many times slower (refserver.SlowPrefix).
func URL(base, dialect string, slowdown float64) string {
	switch dialect {
	case "sse":
		return strings.TrimSuffix(base, "/") + refserver.SlowPath("/events", slowdown)
	case "mcp":
		return strings.TrimSuffix(base, "/") + refserver.SlowPath("/mcp", slowdown)
	case "langgraph":
		return strings.TrimSuffix(base, "/") + refserver.SlowPath(strings.TrimSuffix(LangGraphPath, "/"), slowdown)
	case "text":
		return strings.TrimSuffix(base, "/") + refserver.SlowPath(TextPath, slowdown)
	case "vertex-gemini", "vertex-anthropic":
		return strings.TrimSuffix(base, "/") + refserver.SlowPath(VertexLocation, slowdown)
	}
	if p := refserver.SlowPath("/", slowdown); p != "/" {
		return strings.TrimSuffix(base, "/") + p
	}
	return base
}
