package gosdk

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/streamprobe/streamprobe/internal/testenv/mcppeer"
)

// StatelessHandler is the peer's endpoint with the SDK's Stateless option
// and nothing else: no session, no event store, a server per request; the
// SDK serves 2026-07-28 (server/discover, the per-request _meta envelope
// and the standard headers) and the 2025 versions on it. ?json=1 answers
// application/json; ?cancel=1 sets PropagateRequestCancellation (without
// it, the SDK's default, a dropped call's tool runs on to its end).
func StatelessHandler(rec *mcppeer.Recorder) http.Handler {
	get := func(*http.Request) *mcp.Server { return NewServer(rec) }
	handlers := map[[2]bool]http.Handler{}
	for _, json := range []bool{false, true} {
		for _, cancel := range []bool{false, true} {
			handlers[[2]bool{json, cancel}] = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
				Stateless: true, JSONResponse: json, PropagateRequestCancellation: cancel})
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		handlers[[2]bool{q.Get("json") == "1", q.Get("cancel") == "1"}].ServeHTTP(w, r)
	})
}

// StartStateless runs the stateless Go SDK peer on a loopback port for the
// test; cleanup stops it.
func StartStateless(t testing.TB) *mcppeer.Peer {
	t.Helper()
	rec := &mcppeer.Recorder{}
	mux := http.NewServeMux()
	mux.Handle("/mcp", rec.Wrap(StatelessHandler(rec)))
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return &mcppeer.Peer{Name: "go-sdk-stateless", URL: srv.URL + "/mcp", Log: rec.Log}
}
