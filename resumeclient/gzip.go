package resumeclient

import (
	"compress/gzip"
	"io"
)

// gzipBody decodes a gzip body as it is read, counting the compressed
// bytes that came over the wire. The gzip header is read on the first
// Read, not when the response arrives, so opening a stream never waits for
// its first bytes.
type gzipBody struct {
	raw  io.ReadCloser
	wire countingReader
	zr   *gzip.Reader
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func newGzipBody(raw io.ReadCloser) *gzipBody {
	return &gzipBody{raw: raw, wire: countingReader{r: raw}}
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.zr == nil {
		zr, err := gzip.NewReader(&g.wire)
		if err != nil {
			if err == io.EOF {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		g.zr = zr
	}
	return g.zr.Read(p)
}

func (g *gzipBody) Close() error { return g.raw.Close() }
