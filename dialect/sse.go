package dialect

import (
	"net/http"
	"unsafe"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// sseDialect is the generic dialect: every event with non-empty data is a
// chunk.
type sseDialect struct{}

func (sseDialect) Request(t Target, s Sample, _ bool) (resumeclient.Request, error) {
	method := t.Method
	if method == "" {
		method = http.MethodGet
		if t.Body != nil {
			method = http.MethodPost
		}
	}
	h := t.Header.Clone()
	if t.Body != nil && h.Get("Content-Type") == "" {
		if h == nil {
			h = http.Header{}
		}
		h.Set("Content-Type", "application/json")
	}
	return resumeclient.Request{Method: method, URL: t.URL, Header: h, Body: t.Body}, nil
}

func (sseDialect) Decode(t Target, ev *resumeclient.Event) (Chunk, error) {
	if t.EndEvent != "" && string(ev.Type) == t.EndEvent {
		return Chunk{Kind: End}, nil
	}
	if t.EndData != "" && string(ev.Data) == t.EndData {
		return Chunk{Kind: End}, nil
	}
	if len(ev.Data) > 0 {
		return Chunk{Kind: Text}, nil
	}
	return Chunk{Kind: Meta}, nil
}

func (sseDialect) EOFIsEnd(t Target) bool { return t.EndEvent == "" && t.EndData == "" }

// Resumer is Last-Event-ID on the same request, as EventSource resumes.
func (sseDialect) Resumer() Resumer { return lastEventID{} }

// lastEventID resumes a stream by sending the last event id back in the
// Last-Event-ID header of the same request.
type lastEventID struct{}

// Cursor is the SSE last event ID, from an event that carried an id field
// (the id persists across events, so the probe keeps the last one). It is
// the event's own bytes, not a copy: an event allocates nothing.
func (lastEventID) Cursor(ev *resumeclient.Event, _ Chunk) (string, bool) {
	if !ev.HasID {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(ev.ID), len(ev.ID)), true
}

// Resume resends the request with Last-Event-ID.
func (lastEventID) Resume(orig resumeclient.Request, cursor, _ string) (resumeclient.Request, error) {
	orig.LastEventID = cursor
	return orig, nil
}

func (lastEventID) Label(id string) string { return "Last-Event-ID: " + id }

func (lastEventID) StaleCursor() string { return DefaultStaleID }
