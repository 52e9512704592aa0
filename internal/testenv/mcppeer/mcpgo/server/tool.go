package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// newServer is the library's MCPServer with task support (tools may run
// as tasks; tasks/list and tasks/cancel) and the progress tool, which
// logs its ends to rec.
func newServer(rec *recorder) *server.MCPServer {
	s := server.NewMCPServer("streamprobe-mcppeer-mcpgo", "1.0.0",
		server.WithToolCapabilities(false),
		server.WithTaskCapabilities(true, true, true))
	tool := mcp.NewTool("progress",
		mcp.WithDescription("Reports progress steps times, one every interval_ms, then answers with text; callable as a task."),
		mcp.WithTaskSupport(mcp.TaskSupportOptional),
		mcp.WithNumber("steps", mcp.Description("how many progress reports (default 5)")),
		mcp.WithNumber("interval_ms", mcp.Description("ms before each report (default 50)")),
		mcp.WithNumber("close_after", mcp.Description("accepted for the other peers' sake; this library has no SEP-1699 close")),
		mcp.WithNumber("retry_ms", mcp.Description("accepted for the other peers' sake")),
		mcp.WithString("text", mcp.Description("the answer's text (default done)")),
	)
	s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text := req.GetString("text", "done")
		res, err := progress(ctx, s, req, text)
		session := ""
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			session = cs.SessionID()
		}
		rec.toolDone(session, text, err != nil)
		return res, err
	})
	return s
}

// progress sends `steps` progress notifications (default 5) for the call's
// progressToken, one every `interval_ms` (default 50), then answers
// "<text>: <steps> steps"; it returns ctx.Err() as soon as its context
// ends.
func progress(ctx context.Context, s *server.MCPServer, req mcp.CallToolRequest, text string) (*mcp.CallToolResult, error) {
	count := req.GetInt("steps", 5)
	interval := time.Duration(req.GetInt("interval_ms", 50)) * time.Millisecond
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	for i := 1; i <= count; i++ {
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		if token != nil {
			s.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": token, "progress": i, "total": count, "message": fmt.Sprintf("step %d of %d", i, count),
			})
		}
	}
	return mcp.NewToolResultText(fmt.Sprintf("%s: %d steps", text, count)), nil
}
