// Package hostile is a test server that echoes the credentials of each
// request back into every place a client's output may quote: a malformed
// header line, a reason phrase, a content type, an error body, an event id,
// a provider's error message, a trailer, a position header. Each request
// names the place, the encoding and how many bytes of padding come before
// the echo (so it can straddle any cut) in its path:
//
//	/PLACE/ENCODING/PAD[/anything]
//
// It is a fixture of the tests only.
package hostile

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/streamprobe/streamprobe/internal/refserver"
)

// The places an echo can go.
const (
	HeaderLine   = "headerline"  // a response header line with no colon
	ReasonPhrase = "reason"      // the reason phrase of a 401
	ContentType  = "ctype"       // the Content-Type of a 200 that is not a stream
	ErrorBody    = "body"        // the body of a 401
	EventID      = "id"          // the id of an event; the stream then closes, so the client resumes from it
	StreamError  = "streamerror" // an OpenAI-style error event's message
	Trailer      = "trailer"     // a malformed trailer after a chunked stream
	StaleHeader  = "staleheader" // a Last-Event-ID response header answering a resume
	ChunkExt     = "chunkext"    // a chunk extension, too long
	PushAnswer   = "push"        // the body of a 500 to a metrics push
	Redirect     = "redirect"    // a Location header that cannot be parsed
	Everywhere   = "all"         // the id, then an error event, after a header carrying it
	MCPVersion   = "mcpversion"  // the protocolVersion an MCP server answers initialize with
	encodedPlace = "headerline,reason,ctype,body,id,streamerror,trailer,staleheader,chunkext,push,redirect,all,mcpversion"
)

// Places lists every place.
var Places = strings.Split(encodedPlace, ",")

// The places of a dialect's own error in the stream, for the dialects
// whose error is not an OpenAI-style error object: each echoes the key in
// the provider's message of that dialect's wire format.
const (
	CohereError    = "cohereerror"    // a Cohere message-end with finish_reason ERROR and its error
	BedrockError   = "bedrockerror"   // an AWS event stream throttlingException's message
	GeminiError    = "geminierror"    // a Gemini error object's message (vertex-gemini)
	AnthropicError = "anthropicerror" // an Anthropic error event's message (vertex-anthropic)
	TextStatus     = "textstatus"     // a plain-text 503 whose body is the echo
)

// DialectPlaces are the places above by the dialect whose stream they
// play.
var DialectPlaces = map[string]string{
	"cohere": CohereError, "bedrock": BedrockError, "vertex-gemini": GeminiError, "vertex-anthropic": AnthropicError, "text": TextStatus,
}

// Encodings are the forms an echo takes.
var Encodings = map[string]func(string) string{
	"raw":     func(s string) string { return s },
	"percent": func(s string) string { return strings.NewReplacer("-", "%2D", "_", "%5F").Replace(s) },
	"json":    func(s string) string { return strings.NewReplacer("-", `\u002d`, "_", `\u005f`).Replace(s) },
	"base64":  func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
}

// Server is the echoing server.
type Server struct {
	ln   net.Listener
	URL  string
	wg   sync.WaitGroup
	once sync.Once
}

// Start listens on loopback and serves until Close.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, URL: "http://" + ln.Addr().String()}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return s, nil
}

// Close stops the server and waits for its connections.
func (s *Server) Close() {
	s.once.Do(func() { s.ln.Close() })
	s.wg.Wait()
}

// Secret is what the request carries as a credential: the token of its
// Authorization header, or its X-Api-Key.
func Secret(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if _, tok, ok := strings.Cut(a, " "); ok {
			return tok
		}
		return a
	}
	return r.Header.Get("X-Api-Key")
}

// Echo is the text a request asks to be echoed: PAD bytes of padding,
// then its secret in ENCODING.
func Echo(r *http.Request) (place, text string) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	enc := Encodings[parts[1]]
	if enc == nil {
		enc = Encodings["raw"]
	}
	pad, _ := strconv.Atoi(parts[2])
	return parts[0], strings.Repeat("x", min(max(pad, 0), 1<<20)) + enc(Secret(r))
}

func serve(c net.Conn) {
	r, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	place, echo := Echo(r)
	w := c
	switch place {
	case HeaderLine:
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nBearer %s\r\n\r\n", echo)
	case ReasonPhrase:
		fmt.Fprintf(w, "HTTP/1.1 401 Bad key %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", echo)
	case ContentType:
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: text/html; k=%s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", echo)
	case ErrorBody, PushAnswer:
		body := `{"error":{"message":"invalid key ` + echo + `"}}`
		fmt.Fprintf(w, "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			map[bool]string{true: "500 Internal Server Error", false: "401 Unauthorized"}[place == PushAnswer], len(body), body)
	case Redirect:
		fmt.Fprintf(w, "HTTP/1.1 302 Found\r\nLocation: /%%zz?t=%s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", echo)
	case EventID, Everywhere:
		if r.Header.Get("Last-Event-ID") != "" {
			stream(w, "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\ndata: [DONE]\n\n")
			break
		}
		ev := fmt.Sprintf("id: 1\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\nid: %s\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n", echo)
		if place == Everywhere {
			ev += `data: {"error":{"message":"bad key ` + jsonText(echo) + "\"}}\n\n"
		}
		stream(w, ev)
	case StreamError:
		stream(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"error\":{\"message\":\"bad key "+jsonText(echo)+"\"}}\n\n")
	case StaleHeader:
		if r.Header.Get("Last-Event-ID") != "" {
			fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nLast-Event-ID: %s\r\nConnection: close\r\n\r\ndata: [DONE]\n\n", echo)
			break
		}
		stream(w, "id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\nid: 4\ndata: d\n\n")
	case Trailer:
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n8\r\ndata: x\n\r\n0\r\nBad trailer %s\r\n\r\n", echo)
	case MCPVersion:
		body := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"` + jsonText(echo) + `","capabilities":{},"serverInfo":{"name":"hostile","version":"1"}}}`
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	case ChunkExt:
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n8;%s%s\r\ndata: x\n\r\n", strings.Repeat("e", 100<<10), echo)
	default:
		if !dialectPlace(w, place, echo) {
			fmt.Fprintf(w, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
		}
	}
}

// dialectPlace plays the place of a dialect's own error, false for
// another place.
func dialectPlace(w net.Conn, place, echo string) bool {
	switch place {
	case CohereError:
		stream(w, "event: content-delta\ndata: {\"type\":\"content-delta\",\"delta\":{\"message\":{\"content\":{\"text\":\"a\"}}}}\n\n"+
			"event: message-end\ndata: {\"type\":\"message-end\",\"delta\":{\"finish_reason\":\"ERROR\",\"error\":\"bad key "+jsonText(echo)+"\"}}\n\n")
	case GeminiError:
		stream(w, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\n\n"+
			"data: {\"error\":{\"code\":401,\"status\":\"UNAUTHENTICATED\",\"message\":\"bad token "+jsonText(echo)+"\"}}\n\n")
	case AnthropicError:
		stream(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"bad token "+jsonText(echo)+"\"}}\n\n")
	case BedrockError:
		body := refserver.Frame("event", "contentBlockDelta", []byte(`{"delta":{"text":"a"}}`)) +
			refserver.Frame("exception", "throttlingException", []byte(`{"message":"bad key `+jsonText(echo)+`"}`))
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.amazon.eventstream\r\nConnection: close\r\n\r\n%s", body)
	case TextStatus:
		fmt.Fprintf(w, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(echo), echo)
	default:
		return false
	}
	return true
}

// stream writes a 200 event stream of body, then closes the connection.
func stream(c net.Conn, body string) {
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n%s", body)
}

// jsonText is s as the inside of a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
