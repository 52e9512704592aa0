package jobs

import (
	"slices"
	"strings"

	"github.com/streamprobe/streamprobe/config"
	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/probe"
)

// NeedsBuiltin reports whether a target of c runs against the built-in
// reference target.
func NeedsBuiltin(c *config.Config) bool {
	return slices.ContainsFunc(c.Targets, func(t config.Target) bool { return t.Builtin })
}

// NewBuiltin returns the built-in reference target, unstarted, as every
// command runs it: the demo server of probe.NewDemoServer, keeping the
// last 16 connections for the status of its own tests.
func NewBuiltin() *refserver.Server {
	srv := probe.NewDemoServer()
	srv.KeepConns = 16
	return srv
}

// BuiltinURL is the URL a target of dialect probes on the built-in
// reference target served at base: the generic sse dialect reads the
// resumable drill stream on /events, mcp the MCP server on /mcp, the API
// dialects their API paths.
func BuiltinURL(base, dialect string) string {
	switch dialect {
	case "sse":
		return strings.TrimSuffix(base, "/") + "/events"
	case "mcp":
		return strings.TrimSuffix(base, "/") + "/mcp"
	}
	return base
}
