package resumeclient_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/streamprobe/streamprobe/resumeclient"
)

// A Session reads a stream across drops: here the server closes the stream
// after every two events, and the Session resumes with Last-Event-ID each
// time, as a browser's EventSource would.
func ExampleSession() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next := 1
		if id, err := strconv.Atoi(r.Header.Get("Last-Event-ID")); err == nil {
			next = id + 1
		}
		if next > 5 {
			w.WriteHeader(http.StatusNoContent) // done: stop reconnecting
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "retry: 10\n\n")
		for i := next; i < next+2 && i <= 5; i++ {
			fmt.Fprintf(w, "id: %d\ndata: event %d\n\n", i, i)
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := (&resumeclient.Client{}).NewSession(ctx, resumeclient.Request{URL: srv.URL}, resumeclient.SessionOptions{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for {
		ev, err := s.Next()
		if err != nil {
			fmt.Println("end:", err)
			return
		}
		if ev.Kind == resumeclient.KindEvent {
			fmt.Printf("connection %d: id %s, %s\n", ev.Conn, ev.ID, ev.Data)
		}
	}
	// Output:
	// connection 0: id 1, event 1
	// connection 0: id 2, event 2
	// connection 1: id 3, event 3
	// connection 1: id 4, event 4
	// connection 2: id 5, event 5
	// end: resumeclient: unexpected HTTP status: 204 No Content, the server asks the client to stop reconnecting
}
