// Package awspeer is the AWS side of the bedrock dialect's tests: a
// handler that checks each request's SigV4 signature with the AWS SDK's
// own signer (aws/signer/v4) before it lets the reference target's
// Bedrock stream (written with the SDK's event stream encoder) answer,
// and answers a bad one as AWS does (403, its message quoting what it
// was sent, as a hostile peer would). Tests only: no binary links it.
package awspeer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Verifier checks SigV4 signatures made with Creds for Region and
// Service, then passes the request to Next.
type Verifier struct {
	Creds           aws.Credentials
	Region, Service string
	Next            http.Handler

	mu       sync.Mutex
	verified int
	failures []string
}

// Verified is how many requests carried a good signature.
func (v *Verifier) Verified() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.verified
}

// Failures are why the other requests were refused.
func (v *Verifier) Failures() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.failures...)
}

func (v *Verifier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if why := v.check(r, body); why != "" {
		v.mu.Lock()
		v.failures = append(v.failures, why)
		v.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Errortype", "InvalidSignatureException")
		w.WriteHeader(http.StatusForbidden)
		// As a hostile peer: the message quotes the credential, the
		// signature and the session token it was sent.
		fmt.Fprintf(w, `{"message":"The request signature we calculated does not match the signature you provided (%s; token %s)"}`,
			r.Header.Get("Authorization"), r.Header.Get("X-Amz-Security-Token"))
		return
	}
	v.mu.Lock()
	v.verified++
	v.mu.Unlock()
	v.Next.ServeHTTP(w, r)
}

// check re-signs the request's signed headers, body and date with the
// SDK's signer and compares; "" when they match.
func (v *Verifier) check(r *http.Request, body []byte) string {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
		return "no SigV4 Authorization"
	}
	var signed []string
	for _, f := range strings.Split(strings.TrimPrefix(auth, "AWS4-HMAC-SHA256 "), ",") {
		if k, val, _ := strings.Cut(strings.TrimSpace(f), "="); k == "SignedHeaders" {
			signed = strings.Split(val, ";")
		}
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "no X-Amz-Date"
	}
	req, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	if err != nil {
		return err.Error()
	}
	for _, h := range signed {
		if h != "host" {
			req.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), v.Creds, req, hex.EncodeToString(sum[:]), v.Service, v.Region, at); err != nil {
		return err.Error()
	}
	if got := req.Header.Get("Authorization"); got != auth {
		return "signature mismatch"
	}
	return ""
}
