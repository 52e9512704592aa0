package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

// The target's request body and TLS files, read when the config loads for
// a command that sends requests (Env.Getenv set): a file that cannot be
// read, a body given twice, a CA file with no certificate, a client
// certificate without its key (or one that does not match it) is an
// error at file:line:key, before anything runs.

// TLSFiles is what a target's ca_file, cert_file and key_file hold, read
// at load: the roots its server's certificate must chain to (nil: the
// system's), and its client certificate (nil: none).
type TLSFiles struct {
	RootCAs    *x509.CertPool
	ClientCert *tls.Certificate
}

// checkFiles checks body, body_file, labels, ca_file, cert_file and
// key_file, and reads the files into t.Body and t.TLS.
func (c *Config) checkFiles(t *Target, key func(string) string, getenv func(string) string) []error {
	var errs []error
	for _, k := range sortedKeys(t.Labels) {
		if err := CheckLabelName(k); err != nil {
			errs = append(errs, c.errAt(key("labels."+k), "%v", err))
		}
	}
	if t.BodyText != "" && t.BodyFile != "" {
		errs = append(errs, c.errAt(key("body_file"), "body and body_file both set: give one"))
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		k, missing := key("cert_file"), "key_file"
		if t.CertFile == "" {
			k, missing = key("key_file"), "cert_file"
		}
		errs = append(errs, c.errAt(k, "a client certificate needs both cert_file and key_file: %s is missing", missing))
	}
	if getenv == nil {
		return errs
	}
	if t.BodyText != "" {
		t.Body = []byte(t.BodyText)
	}
	if t.BodyFile != "" {
		b, err := readFile(t.BodyFile)
		if err != nil {
			errs = append(errs, c.errAt(key("body_file"), "%v", err))
		}
		t.Body = b
	}
	if err := c.readTLS(t, key); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// readTLS reads ca_file and the client certificate's pair into t.TLS.
func (c *Config) readTLS(t *Target, key func(string) string) error {
	if t.CAFile == "" && t.CertFile == "" {
		return nil
	}
	files := &TLSFiles{}
	if t.CAFile != "" {
		b, err := readFile(t.CAFile)
		if err != nil {
			return c.errAt(key("ca_file"), "%v", err)
		}
		files.RootCAs = x509.NewCertPool()
		if !files.RootCAs.AppendCertsFromPEM(b) {
			return c.errAt(key("ca_file"), "%s holds no PEM certificate", t.CAFile)
		}
	}
	if t.CertFile != "" && t.KeyFile != "" {
		certPEM, err := readFile(t.CertFile)
		if err != nil {
			return c.errAt(key("cert_file"), "%v", err)
		}
		keyPEM, err := readFile(t.KeyFile)
		if err != nil {
			return c.errAt(key("key_file"), "%v", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// The error names the PEM blocks' types, never their bytes.
			return c.errAt(key("key_file"), "%s and %s are not a certificate and its key: %s", t.CertFile, t.KeyFile, strings.TrimPrefix(err.Error(), "tls: "))
		}
		files.ClientCert = &cert
	}
	t.TLS = files
	return nil
}

// readFile reads a file the config names, in one line on error; an empty
// file is an error.
func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("cannot read %s: %v", path, pe.Err)
		}
		return nil, fmt.Errorf("cannot read %s", path)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	return b, nil
}
