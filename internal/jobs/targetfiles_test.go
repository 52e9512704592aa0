package jobs

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamprobe/streamprobe/probe"
)

// clientCert makes a self-signed client certificate and its key, writes
// both as PEM files in dir, and returns their paths and the certificate.
func clientCert(t *testing.T, dir, name string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ = x509.ParseCertificate(der)
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kb)
	return certFile, keyFile, cert
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// mtlsServer is a real TLS server that requires a client certificate
// chaining to clientCA, and streams one SSE answer; it keeps the bodies
// it was sent. Its own certificate's PEM is written to caFile.
type mtlsServer struct {
	*httptest.Server
	caFile string
	mu     sync.Mutex
	bodies []string
}

func newMTLSServer(t *testing.T, dir string, clientCA *x509.Certificate) *mtlsServer {
	s := &mtlsServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, r.Method+" "+string(b))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: 1\ndata: hi\n\nid: 2\ndata: [DONE]\n\n")
	}))
	pool := x509.NewCertPool()
	pool.AddCert(clientCA)
	s.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	s.StartTLS()
	t.Cleanup(s.Close)
	s.caFile = filepath.Join(dir, "server-ca.pem")
	writePEM(t, s.caFile, "CERTIFICATE", s.Certificate().Raw)
	return s
}

// A target's ca_file and client certificate against a real TLS server
// that requires one: with both the run succeeds and presents the
// certificate; without the client certificate the server refuses the
// handshake, and without ca_file the client refuses the server's
// certificate; each a failed run, never a success. The body (text or
// file) is what the server gets, and the record carries the target's
// labels merged over the config's.
func TestTargetTLSFilesBodyAndLabels(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, cert := clientCert(t, dir, "probe")
	srv := newMTLSServer(t, dir, cert)
	bodyFile := filepath.Join(dir, "body.json")
	if err := os.WriteFile(bodyFile, []byte(`{"model":"llama3.2","prompt":"hi"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := parse(t, fmt.Sprintf(`[labels]
team = "search"
env = "prod"
[[target]]
name = "mtls"
url = %[1]q
method = "POST"
body = '{"q":1}'
ca_file = %[2]q
cert_file = %[3]q
key_file = %[4]q
samples = ["short"]
[target.labels]
env = "canary"
pop = "fra"
[[target]]
name = "mtls-file"
url = %[1]q
body_file = %[5]q
ca_file = %[2]q
cert_file = %[3]q
key_file = %[4]q
samples = ["short"]
[[target]]
name = "no-cert"
url = %[1]q
ca_file = %[2]q
samples = ["short"]
[[target]]
name = "no-ca"
url = %[1]q
cert_file = %[3]q
key_file = %[4]q
samples = ["short"]
`, srv.URL, srv.caFile, certFile, keyFile, bodyFile), nil)
	js, err := Build(c, "", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]probe.Record{}
	for _, j := range js {
		got[j.Target.Name] = j.Run(context.Background(), nil).Record
		j.Client.HTTP.CloseIdleConnections()
	}
	for _, name := range []string{"mtls", "mtls-file"} {
		if r := got[name]; r.Outcome != probe.Success {
			t.Errorf("%s: outcome %s (%s), want success", name, r.Outcome, r.Error)
		}
	}
	for name, want := range map[string]string{"no-cert": "certificate", "no-ca": "certificate"} {
		if r := got[name]; r.Outcome == probe.Success || !strings.Contains(r.Error, want) {
			t.Errorf("%s: outcome %s, error %q: want a failed run naming the %s", name, r.Outcome, r.Error, want)
		}
	}
	srv.mu.Lock()
	bodies := strings.Join(srv.bodies, "\n")
	srv.mu.Unlock()
	for _, want := range []string{`POST {"q":1}`, `POST {"model":"llama3.2","prompt":"hi"}`} {
		if !strings.Contains(bodies, want) {
			t.Errorf("the server got %q, not %q", bodies, want)
		}
	}
	if l := got["mtls"].Labels; l["team"] != "search" || l["env"] != "canary" || l["pop"] != "fra" || len(l) != 3 {
		t.Errorf("mtls's labels %v: want team=search env=canary pop=fra", l)
	}
	if l := got["mtls-file"].Labels; l["env"] != "prod" || l["pop"] != "" {
		t.Errorf("mtls-file's labels %v: want the config's alone", l)
	}
}
