package resumeclient

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Sentinel errors. Every error the package returns wraps one of these, a
// context error, or io.EOF, so callers classify failures with errors.Is
// through any number of layers. Their messages carry no package prefix:
// they end up, whole, in the records and logs people read.
var (
	// ErrEventTooLarge means one event (its data and the line being read)
	// grew past the configured limit; the stream is abandoned.
	ErrEventTooLarge = errors.New("event larger than the limit")
	// ErrBadFrame means a binary frame of the stream (an AWS event stream
	// message) did not decode: a wrong length, a CRC that does not match,
	// a header of no known type. The stream is abandoned.
	ErrBadFrame = errors.New("malformed event stream message")
	// ErrNotEventStream means the response was not text/event-stream.
	ErrNotEventStream = errors.New("response is not text/event-stream")
	// ErrHTTPStatus means the server answered with a status other than 200.
	ErrHTTPStatus = errors.New("unexpected HTTP status")
	// ErrNoContent means the server answered 204 No Content: the WHATWG
	// rules read it as "stop reconnecting". It also wraps ErrHTTPStatus.
	ErrNoContent = fmt.Errorf("%w: 204 No Content, the server asks the client to stop reconnecting", ErrHTTPStatus)
	// ErrReset means the connection broke (reset, unexpected EOF) before a
	// clean end of the body.
	ErrReset = errors.New("connection broken mid-stream")
	// ErrDropped means the client itself cut the connection on purpose.
	ErrDropped = errors.New("connection dropped by the client")
	// ErrIdle means no byte arrived within the read timeout; the client
	// dropped the connection.
	ErrIdle = errors.New("no data within the read timeout")
	// ErrConnect means the request could not be sent or no response came
	// (DNS, refused, TLS, a refused redirect).
	ErrConnect = errors.New("request failed")
	// ErrInvalidRequest means the request cannot be sent as it is (a
	// header value with a byte no HTTP field may carry, a URL that does
	// not parse): no attempt was made, and retrying cannot help.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrTooManyReconnects means a Session gave up after its bounded
	// number of reconnect attempts in a row.
	ErrTooManyReconnects = errors.New("too many reconnect attempts")
	// ErrInvalidOption means a Client or Session setting is out of range.
	ErrInvalidOption = errors.New("invalid option")
)

// StatusError is the error of a response that is not an event stream: a
// status other than 200, or another content type. Open and Session return
// it instead of a Stream. It wraps ErrHTTPStatus, ErrNoContent or
// ErrNotEventStream.
type StatusError struct {
	// Status is the HTTP status code and Header the response header.
	Status int
	Header http.Header
	// Start is when the request was started, HeadersAt when the response
	// headers arrived, both on the client's clock.
	Start, HeadersAt time.Time
	// Snippet is the start of the body, scrubbed of the request's secrets
	// and bounded; empty when there was none.
	Snippet string

	kind        error
	want        string // the media type the request asked for
	contentType string // scrubbed and bounded
}

func (e *StatusError) Error() string {
	var msg string
	switch e.kind {
	case ErrNotEventStream:
		kind := e.kind.Error()
		if e.want != "" && e.want != "text/event-stream" {
			kind = "response is not " + e.want
		}
		msg = fmt.Sprintf("%s: status %d, Content-Type %q", kind, e.Status, e.contentType)
	case ErrNoContent:
		msg = ErrNoContent.Error()
	default:
		msg = fmt.Sprintf("%v %d %s", e.kind, e.Status, http.StatusText(e.Status))
	}
	if e.Snippet != "" {
		msg += fmt.Sprintf(", body starts %q", e.Snippet)
	}
	return msg
}

// Unwrap returns the sentinel the error belongs to.
func (e *StatusError) Unwrap() error { return e.kind }
