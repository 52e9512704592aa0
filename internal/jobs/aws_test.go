package jobs

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/streamprobe/streamprobe/internal/refserver"
	"github.com/streamprobe/streamprobe/internal/testenv/awspeer"
	"github.com/streamprobe/streamprobe/internal/testenv/leak"
	"github.com/streamprobe/streamprobe/probe"
)

// bedrockAPI is a Bedrock stream behind the SDK signer's check of the
// signature made with creds (us-east-1).
func bedrockAPI(t *testing.T, creds aws.Credentials) (*httptest.Server, *awspeer.Verifier) {
	b := &refserver.Bedrock{}
	srv := refserver.NewUnstarted(b.Start(0).Text(time.Millisecond, "a").Stop(2*time.Millisecond, "end_turn").Metadata(3*time.Millisecond, 3, 1, 0).Steps())
	srv.ContentType = refserver.EventStream
	v := &awspeer.Verifier{Creds: creds, Region: "us-east-1", Service: "bedrock", Next: srv.Handler()}
	ts := httptest.NewServer(v)
	t.Cleanup(ts.Close)
	return ts, v
}

func bedrockConfig(url, extra string) string {
	return fmt.Sprintf("[[target]]\nname = \"br\"\nurl = %q\ndialect = \"bedrock\"\nmodel = \"amazon.nova-lite-v1:0\"\naws_region = \"us-east-1\"\nsamples = [\"short\", \"long\"]\n%s", url, extra)
}

// Each standard AWS credential source, as a run finds it: the
// environment, the shared credentials file's profile, web identity
// (exchanged at a loopback STS), the EC2 instance role (a loopback IMDS,
// IMDSv2). Every run's request carries a signature the SDK's signer
// accepts; the credentials of a source with an expiry are fetched once
// for all the runs; no record shows a credential.
func TestAWSCredentialSources(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: "AKIASTREAMPROBEJOBS1", SecretAccessKey: "jobs/secret/0123456789abcdefghij", SessionToken: "FwoGZXIvYXdzStreamprobeJobsToken0123456789"}
	dir := t.TempDir()
	credFile := filepath.Join(dir, "credentials")
	os.WriteFile(credFile, []byte(fmt.Sprintf("[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n[probe]\naws_access_key_id = %s\naws_secret_access_key = %s\naws_session_token = %s\n",
		creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken)), 0o600)
	webToken := filepath.Join(dir, "web-identity")
	os.WriteFile(webToken, []byte("eyJhbGciOiJSUzI1NiJ9.web-identity-jwt.sig"), 0o600)
	var mu sync.Mutex
	calls := map[string]int{}
	count := func(k string) {
		mu.Lock()
		calls[k]++
		mu.Unlock()
	}
	expiry := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		count("sts")
		if r.Form.Get("Action") != "AssumeRoleWithWebIdentity" || r.Form.Get("WebIdentityToken") != "eyJhbGciOiJSUzI1NiJ9.web-identity-jwt.sig" ||
			r.Form.Get("RoleArn") != "arn:aws:iam::123456789012:role/probe" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult><Credentials>`+
			`<AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey><SessionToken>%s</SessionToken><Expiration>%s</Expiration>`+
			`</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>`, creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken, expiry)
	}))
	defer sts.Close()
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/latest/api/token":
			w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", "21600")
			w.Write([]byte("imds-session-token"))
		case r.Header.Get("X-Aws-Ec2-Metadata-Token") != "imds-session-token":
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		case r.URL.Path == "/latest/meta-data/iam/security-credentials/":
			w.Write([]byte("probe-role"))
		case r.URL.Path == "/latest/meta-data/iam/security-credentials/probe-role":
			count("imds")
			json.NewEncoder(w).Encode(map[string]string{"Code": "Success", "AccessKeyId": creds.AccessKeyID, "SecretAccessKey": creds.SecretAccessKey,
				"Token": creds.SessionToken, "Expiration": expiry, "LastUpdated": time.Now().UTC().Format(time.RFC3339), "Type": "AWS-HMAC"})
		default:
			http.NotFound(w, r)
		}
	}))
	defer imds.Close()
	none := filepath.Join(dir, "none")
	for _, tc := range []struct {
		name, extra string
		env         map[string]string
		calls       string
	}{
		{"environment", "", map[string]string{"AWS_ACCESS_KEY_ID": creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY": creds.SecretAccessKey, "AWS_SESSION_TOKEN": creds.SessionToken}, ""},
		{"shared credentials file", "aws_profile = \"probe\"\n", map[string]string{"AWS_SHARED_CREDENTIALS_FILE": credFile}, ""},
		{"shared file, AWS_PROFILE", "", map[string]string{"AWS_SHARED_CREDENTIALS_FILE": credFile, "AWS_PROFILE": "probe"}, ""},
		{"web identity", "", map[string]string{"AWS_WEB_IDENTITY_TOKEN_FILE": webToken, "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/probe",
			"AWS_ENDPOINT_URL_STS": sts.URL, "AWS_SHARED_CREDENTIALS_FILE": none}, "sts"},
		{"IMDS", "", map[string]string{"AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.URL, "AWS_SHARED_CREDENTIALS_FILE": none}, "imds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, v := bedrockAPI(t, creds)
			c := parse(t, bedrockConfig(api.URL, tc.extra), tc.env)
			js, err := Build(c, "", env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			before := calls[tc.calls]
			for _, j := range []Job{js[0], js[1], js[0]} {
				r := runJob(t, j)
				if r.Outcome != probe.Success {
					t.Fatalf("%s: %s %s (refused: %q)", j.Name, r.Outcome, r.Error, v.Failures())
				}
				b, _ := json.Marshal(r)
				for _, s := range []string{creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken} {
					if p := leak.Any(string(b), s); p != "" {
						t.Errorf("the record shows %q: %s", p, b)
					}
				}
			}
			if v.Verified() != 3 {
				t.Errorf("%d signatures verified, want 3", v.Verified())
			}
			if tc.calls != "" && calls[tc.calls]-before != 1 {
				t.Errorf("%d fetches from %s for 3 runs, want 1 (cached)", calls[tc.calls]-before, tc.calls)
			}
		})
	}
}

// No credentials anywhere: the run fails naming where it looked, before
// any request; a half-set environment is named as such.
func TestAWSNoCredentials(t *testing.T) {
	api, v := bedrockAPI(t, aws.Credentials{})
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true"},
			"credentials: aws credentials: none in the environment, no web identity, no profile default in /nonexistent, and IMDS is off (AWS_EC2_METADATA_DISABLED)"},
		{map[string]string{"AWS_ACCESS_KEY_ID": "AKIAHALFSET000000000"}, "credentials: aws credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together"},
	} {
		js, err := Build(parse(t, bedrockConfig(api.URL, ""), tc.env), "", env(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		if r := runJob(t, js[0]); r.Outcome != probe.UpstreamError || r.Error != tc.want || strings.Contains(r.Error, "AKIAHALFSET") {
			t.Errorf("%s %q, want %q", r.Outcome, r.Error, tc.want)
		}
	}
	if v.Verified()+len(v.Failures()) != 0 {
		t.Error("a request went out without credentials")
	}
}

// A Bedrock API key (bearer_env) replaces the signature: no credential
// source is asked, the key goes as a bearer token.
func TestBedrockAPIKeyIsBearer(t *testing.T) {
	api, got := authServer(t)
	c := parse(t, bedrockConfig(api.URL, "bearer_env = \"AWS_BEARER_TOKEN_BEDROCK\"\n"), map[string]string{"AWS_BEARER_TOKEN_BEDROCK": "ABSKbedrock-api-key-0123456789"})
	js, err := Build(c, "", env(map[string]string{"AWS_BEARER_TOKEN_BEDROCK": "ABSKbedrock-api-key-0123456789"}))
	if err != nil {
		t.Fatal(err)
	}
	if js[0].AWS != nil {
		t.Fatal("a target with a Bedrock API key signs with SigV4")
	}
	runJob(t, js[0]) // authServer answers SSE: the run fails; the header is what is checked
	if g := got(); len(g) != 1 || g[0] != "Bearer ABSKbedrock-api-key-0123456789" {
		t.Errorf("the server saw %q", g)
	}
}
