package resumeclient

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
)

// BenchmarkTransportRoundTrip is one request through the Transport to a
// loopback server that answers at once with a short event stream: the
// dial, the request write, the header read and the body to its end.
func BenchmarkTransportRoundTrip(b *testing.B) {
	const answer = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 18\r\n\r\nid: 1\ndata: one\n\n\n"
	addr := rawServer(b, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
			io.WriteString(c, answer)
		}
	})
	tr := &Transport{Proxy: func(*http.Request) (*url.URL, error) { return nil, nil }}
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/stream", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != 18 {
			b.Fatalf("body: %d bytes, %v", n, err)
		}
		resp.Body.Close()
	}
}
