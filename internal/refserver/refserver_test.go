package refserver

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// With KeepConns trimming the log, only the first connection ever made is
// "the first": a later one must not replay the first connection's faults.
func TestKeepConnsDoesNotMakeEveryConnectionTheFirst(t *testing.T) {
	srv := NewUnstarted(Events(Ms(1, 2, 3, 4), 5*time.Millisecond))
	srv.KeepConns = 1
	srv.ResetAfter = 2
	srv.Start()
	defer srv.Close()
	var bodies []string
	var errs []error
	for range 3 {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		bodies, errs = append(bodies, string(b)), append(errs, err)
	}
	if errs[0] == nil {
		t.Errorf("the first connection was not broken after 2 events: %q", bodies[0])
	}
	for i := 1; i < 3; i++ {
		if errs[i] != nil {
			t.Errorf("connection %d broken too (%v): KeepConns made it look like the first", i, errs[i])
		}
	}
	if n := len(srv.Conns()); n != 1 {
		t.Errorf("%d connection logs kept, want 1", n)
	}
}
