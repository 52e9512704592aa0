package configsrc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A server that gives Last-Modified and no ETag is asked with
// If-Modified-Since; its 304 is "not modified", and a new text is taken.
func TestLastModified(t *testing.T) {
	var mu sync.Mutex
	body, mod := "a = 1\n", time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var asked []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r.Header.Get("If-Modified-Since")+"|"+r.Header.Get("If-None-Match"))
		if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !mod.After(ims) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Last-Modified", mod.Format(http.TimeFormat))
		w.Write([]byte(body))
	}))
	defer ts.Close()
	s, err := New(ts.URL+"/c.toml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	f1, err1 := s.Fetch(context.Background())
	f2, err2 := s.Fetch(context.Background())
	mu.Lock()
	body, mod = "a = 2\n", mod.Add(time.Hour)
	mu.Unlock()
	f3, err3 := s.Fetch(context.Background())
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	if string(f1.Text) != "a = 1\n" || f1.NotModified || !f2.NotModified || string(f2.Text) != "a = 1\n" || f3.NotModified || string(f3.Text) != "a = 2\n" {
		t.Errorf("fetches: %+v %+v %+v", f1, f2, f3)
	}
	if asked[0] != "|" || asked[1] != "Tue, 01 Dec 2026 10:00:00 GMT|" {
		t.Errorf("conditional headers sent: %q", asked)
	}
	if s.Name() != ts.URL+"/c.toml" {
		t.Errorf("name %q", s.Name())
	}
}

// A config server that wants a client certificate gets the one given
// (-config-cert, -config-key), checked against -config-ca; without it the
// fetch fails, naming the URL.
func TestClientCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := makeCert(t, nil, nil, "streamprobe test CA", true)
	client, clientKey := makeCert(t, ca, caKey, "probe-1", false)
	certFile, keyFile := writePEM(t, dir, "client", client, clientKey)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("cn = \"" + r.TLS.PeerCertificates[0].Subject.CommonName + "\"\n"))
	}))
	ts.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	ts.StartTLS()
	defer ts.Close()
	caFile := filepath.Join(dir, "server-ca.pem")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600)

	s, err := New(ts.URL+"/c.toml", Options{CertFile: certFile, KeyFile: keyFile, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Fetch(context.Background())
	if err != nil || string(f.Text) != "cn = \"probe-1\"\n" {
		t.Fatalf("%q %v", f.Text, err)
	}
	s, _ = New(ts.URL+"/c.toml", Options{CAFile: caFile})
	if _, err := s.Fetch(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "fetch "+ts.URL+"/c.toml: ") {
		t.Errorf("without a certificate: %v", err)
	}
	if _, err := New(ts.URL, Options{CertFile: certFile}); err == nil || err.Error() != "-config-cert and -config-key go together" {
		t.Errorf("a certificate without its key: %v", err)
	}
}

func makeCert(t *testing.T, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, cn string, isCA bool) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: isCA, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c, key
}

func writePEM(t *testing.T, dir, name string, c *x509.Certificate, key *ecdsa.PrivateKey) (string, string) {
	t.Helper()
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cf, kf := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	os.WriteFile(cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}), 0o600)
	os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cf, kf
}
