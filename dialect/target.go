package dialect

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
)

// Target is one endpoint to probe.
type Target struct {
	Name    string
	URL     string
	Dialect string
	// Method overrides the dialect's method.
	Method string
	// Header is sent with every request (secrets included: it never goes
	// into a record or a log line).
	Header http.Header
	// Body, when not nil, replaces the body the dialect would build.
	Body []byte
	// Model is sent by chat dialects.
	Model string
	// Tools are the tool calls of the mcp dialect by sample name; a
	// sample with none calls DefaultMCPTools' (see MCPTool).
	Tools map[string]ToolCall
	// MCPVersion pins the MCP protocol version (one of MCPVersions); ""
	// asks the server (server/discover) and speaks the newest both know.
	MCPVersion string
	// RunID is the run's request id, set by Run: a dialect whose messages
	// name their call (MCP's JSON-RPC id and progress token) names it so.
	RunID string
	// EndEvent and EndData are the generic dialect's end markers: an event
	// with this type, or with exactly this data. Both empty: a clean end of
	// the body is the end.
	EndEvent string
	EndData  string
	// MaxEventSize bounds one event; 0 means the transport's default.
	MaxEventSize int
	// MaxChunks bounds the content chunks of one run; 0 means
	// DefaultMaxChunks. A stream with more ends as a protocol_error.
	MaxChunks int
	// InsecureSkipVerify turns off TLS certificate verification for this
	// target only. Callers log it loudly; it is never the default. (The
	// flags stay together: a bool between words costs a word in every
	// run's copy of its target.)
	InsecureSkipVerify bool
	// KeepAlive lets runs reuse a kept-alive connection (with a client
	// from NewClient); by default every run opens a fresh one.
	KeepAlive bool
	// HTTP2 offers HTTP/2 over TLS (as browsers do); by default a client
	// from NewClient speaks HTTP/1.1, as the OpenAI and Anthropic SDKs do.
	HTTP2 bool
	// NoResume turns off the resume after a drop by the server (for
	// dialects that can resume): such a drop is then an upstream_error.
	// Drills still resume.
	NoResume bool
	// NoInlineThink turns off the detection of a reasoning block inside
	// the visible text (a leading <think>...</think>, see Think): the
	// text is then all the answer's.
	NoInlineThink bool
	// App holds the settings of the dialects that speak an application's
	// API rather than a model's (langgraph, a resumable ai-sdk-ui route);
	// nil: their defaults. Behind a pointer: a run keeps its target for as
	// long as its stream lasts.
	App *App
	// Net is how the target's connections are made (IP family, a fixed
	// address, the source address, the proxy); nil is the system's way:
	// DNS, either family, the environment's proxy. A pointer: few targets
	// set one, and a run keeps a copy of its target for as long as its
	// stream lasts (probe's run stays in the 1536 B size class).
	Net *Network
}

// Network is the network path of a target's connections, applied by a
// client from NewClient on both of its transports.
type Network struct {
	// IPVersion is "4" or "6" to dial that family only; "" either.
	IPVersion string
	// Resolve is the IP address dialled for the URL's host instead of
	// what DNS says (curl's --resolve): TLS and the Host header still
	// name the host. "" asks DNS.
	Resolve string
	// SourceAddr is the local IP address connections are made from; ""
	// lets the system choose.
	SourceAddr string
	// Proxy is the target's proxy; nil means the environment's
	// (HTTPS_PROXY, ...), unless NoProxy.
	Proxy *url.URL
	// NoProxy connects directly, whatever the environment says.
	NoProxy bool
	// RootCAs are the roots the server's certificate must chain to (nil:
	// the system's); ClientCert the certificate the client presents
	// (nil: none). A target's ca_file, cert_file and key_file.
	RootCAs    *x509.CertPool
	ClientCert *tls.Certificate
}

// Set reports whether n asks for anything but the system's way: a run
// then records the address it connected to (Record.RemoteAddr). A nil n
// asks for nothing.
func (n *Network) Set() bool {
	return n != nil && (n.IPVersion != "" || n.Resolve != "" || n.SourceAddr != "" || n.Proxy != nil || n.NoProxy)
}

// App is the settings of an application's API.
type App struct {
	// LangGraph: the assistant (or graph id) a run is made on, the run's
	// input (a JSON object; nil: the sample's prompt as one user message),
	// its stream modes (nil: DefaultStreamModes), and whether it asks for
	// a resumable stream (nil: yes).
	AssistantID     string
	Input           []byte
	StreamModes     []string
	StreamResumable *bool
	// Resumable says the app resumes its answers (an AI SDK route with
	// resumable streams), at ResumeURL ("": DefaultResumeURL).
	Resumable bool
	ResumeURL string
}

// app is t's App, or the defaults.
func (t Target) app() *App {
	if t.App == nil {
		return &App{}
	}
	return t.App
}
