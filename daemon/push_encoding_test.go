package daemon

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A push endpoint answering 500 with its error body in each
// Content-Encoding: gzip (which the push's client decodes, a bomb of
// 10 MB included), deflate and an unknown one (which it does not: the
// bytes as they came), identity and none. The body echoes the push token
// and terminal controls (ESC, OSC, BEL, CR); whatever the encoding, the
// kept error is bounded, names the status, shows no token and no raw
// control, and the decoded bodies show their text.
func TestPushErrorBodyInEveryEncoding(t *testing.T) {
	const token = "push-token-enc-0123456789abcdef"
	text := "denied \x1b]0;owned\x07 \x1b[2J\r\nX-Forged: 1 token " + token + " " + strings.Repeat("E", 4<<10)
	gz := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	fl := func(s string) []byte {
		var b bytes.Buffer
		zw, _ := flate.NewWriter(&b, flate.BestCompression)
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	for _, tc := range []struct {
		name, encoding string
		body           []byte
		decoded        bool // the kept error quotes the text itself
	}{
		{"none", "", []byte(text), true},
		{"identity", "identity", []byte(text), true},
		{"gzip", "gzip", gz(text), true},
		{"gzip bomb", "gzip", gz(text + strings.Repeat("E", 10<<20)), true},
		{"deflate", "deflate", fl(text), false},
		{"unknown", "x-custom", []byte(text), true},
		{"bad gzip", "gzip", append([]byte{0x1f, 0x8b}, text...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.encoding != "" {
					w.Header().Set("Content-Encoding", tc.encoding)
				}
				w.WriteHeader(http.StatusInternalServerError)
				w.Write(tc.body)
			}))
			defer srv.Close()
			d, logs, addr := pushDaemon(t, srv.URL+"/api/v1/import/prometheus", "authorization_env = \"PUSH_AUTH\"\n", map[string]string{"PUSH_AUTH": "Bearer " + token})
			waitFor(t, "a failed push", 30*time.Second, func() bool { return lastPushErr(d) != "" })
			e := lastPushErr(d)
			t.Logf("kept: %q", e)
			if len(e) > pushErrMax || !strings.Contains(e, "500") {
				t.Errorf("kept push error is %d bytes (bound %d), want the status in it: %.300q", len(e), pushErrMax, e)
			}
			if tc.decoded && !strings.Contains(e, "denied") {
				t.Errorf("the kept error does not quote the body: %q", e)
			}
			shown := map[string]string{"kept error": e, "log": logs.String(), "/healthz": get(t, addr, "/healthz")}
			for where, s := range shown {
				if strings.Contains(s, token) {
					t.Errorf("%s shows the token", where)
				}
				if strings.ContainsAny(s, "\x1b\x07\r\u009b") || where == "kept error" && strings.Contains(s, "\n") {
					t.Errorf("%s holds a raw control character: %.300q", where, s)
				}
			}
		})
	}
}
