package resumeclient

import "errors"

// Sentinel errors. Every error the package returns wraps one of these, so
// callers classify failures with errors.Is through any number of layers.
var (
	// ErrEventTooLarge means one event (its data and the line being read)
	// grew past the configured limit; the stream is abandoned.
	ErrEventTooLarge = errors.New("resumeclient: event larger than the limit")
	// ErrNotEventStream means the response was not text/event-stream.
	ErrNotEventStream = errors.New("resumeclient: response is not text/event-stream")
	// ErrHTTPStatus means the server answered with a status other than 200.
	ErrHTTPStatus = errors.New("resumeclient: unexpected HTTP status")
	// ErrReset means the connection broke (reset, unexpected EOF) before a
	// clean end of the body.
	ErrReset = errors.New("resumeclient: connection broken mid-stream")
	// ErrDropped means the client itself cut the connection on purpose.
	ErrDropped = errors.New("resumeclient: connection dropped by the client")
)
