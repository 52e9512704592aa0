package tokensource

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/streamprobe/streamprobe/textgate"
)

// SignFunc signs a request: it sets its headers in h, computed over the
// method, the URL, h and the body (probe.Options' Sign).
type SignFunc func(method, url string, h http.Header, body []byte) error

// AWS is a target's AWS credentials and what it signs with them (SigV4
// for Service in Region). The credentials come from the standard sources,
// in the AWS SDKs' order, the first one that is set: the environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), web
// identity (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, exchanged at
// STS by the SDK's stscreds), the shared credentials file's profile
// (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials; the profile from
// the config, else AWS_PROFILE, else default), and the EC2 instance's
// role through IMDS (the SDK's ec2rolecreds; off with
// AWS_EC2_METADATA_DISABLED=true). They are cached and fetched again
// before they expire (aws.CredentialsCache). The SDK's own config loader
// is not used: it adds 3.4 MB to the binary for SSO, credential processes
// and role chains (see README's dependencies).
type AWS struct {
	Region, Service, Profile string
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// HTTP is the client of STS and IMDS (nil: the SDK's).
	HTTP *http.Client
	// Now is the signing clock (time.Now when nil).
	Now func() time.Time

	once     sync.Once
	provider aws.CredentialsProvider
	where    string
	signer   *v4.Signer
}

// Signer fetches the credentials (from the cache while they are valid)
// within ctx, before the run, and returns the function that signs the
// run's request with them. Its error names the source and shows no
// secret.
func (a *AWS) Signer(ctx context.Context) (SignFunc, error) {
	a.once.Do(a.init)
	if a.provider == nil {
		return nil, errors.New(a.where)
	}
	creds, err := a.provider.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("aws credentials from %s: %s", a.where, textgate.Scrub(err.Error(), nil, maxError))
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	return func(method, url string, h http.Header, body []byte) error {
		req, err := http.NewRequest(method, url, nil)
		if err != nil {
			return errors.New("the request's URL does not parse")
		}
		req.Header = h
		sum := sha256.Sum256(body)
		if err := a.signer.SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), a.Service, a.Region, now().UTC()); err != nil {
			return fmt.Errorf("sigv4: %w", err)
		}
		return nil
	}, nil
}

func (a *AWS) getenv(k string) string {
	if a.Getenv != nil {
		return a.Getenv(k)
	}
	return os.Getenv(k)
}

// init picks the first source that is set.
func (a *AWS) init() {
	a.signer = v4.NewSigner()
	env := a.getenv
	var p aws.CredentialsProvider
	switch file := env("AWS_WEB_IDENTITY_TOKEN_FILE"); {
	case env("AWS_ACCESS_KEY_ID") != "" || env("AWS_SECRET_ACCESS_KEY") != "":
		a.where = "the environment (AWS_ACCESS_KEY_ID)"
		if env("AWS_ACCESS_KEY_ID") == "" || env("AWS_SECRET_ACCESS_KEY") == "" {
			a.where = "aws credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together"
			return
		}
		p = credentials.NewStaticCredentialsProvider(env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"), env("AWS_SESSION_TOKEN"))
	case file != "" && env("AWS_ROLE_ARN") != "":
		a.where = "web identity (AWS_WEB_IDENTITY_TOKEN_FILE " + file + ")"
		o := sts.Options{Region: a.Region}
		if a.HTTP != nil {
			o.HTTPClient = a.HTTP
		}
		if e := env("AWS_ENDPOINT_URL_STS"); e != "" {
			o.BaseEndpoint = aws.String(e)
		}
		p = stscreds.NewWebIdentityRoleProvider(sts.New(o), env("AWS_ROLE_ARN"), stscreds.IdentityTokenFile(file), func(w *stscreds.WebIdentityRoleOptions) {
			w.RoleSessionName = env("AWS_ROLE_SESSION_NAME")
			if w.RoleSessionName == "" {
				w.RoleSessionName = "streamprobe"
			}
		})
	default:
		profile := a.Profile
		if profile == "" {
			profile = env("AWS_PROFILE")
		}
		if profile == "" {
			profile = "default"
		}
		path := env("AWS_SHARED_CREDENTIALS_FILE")
		if path == "" {
			if home, err := os.UserHomeDir(); err == nil {
				path = filepath.Join(home, ".aws", "credentials")
			}
		}
		if id, secret, token, ok := sharedCredentials(path, profile); ok {
			a.where = "the shared credentials file " + path + " [" + profile + "]"
			p = credentials.NewStaticCredentialsProvider(id, secret, token)
			break
		}
		if strings.EqualFold(env("AWS_EC2_METADATA_DISABLED"), "true") {
			a.where = "aws credentials: none in the environment, no web identity, no profile " + profile + " in " + path + ", and IMDS is off (AWS_EC2_METADATA_DISABLED)"
			return
		}
		a.where = "the EC2 instance role (IMDS)"
		var o imds.Options
		if a.HTTP != nil {
			o.HTTPClient = a.HTTP
		}
		if e := env("AWS_EC2_METADATA_SERVICE_ENDPOINT"); e != "" {
			o.Endpoint = e
		}
		p = ec2rolecreds.New(func(r *ec2rolecreds.Options) { r.Client = imds.New(o) })
	}
	a.provider = aws.NewCredentialsCache(p, func(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = Early })
}

// sharedCredentials reads profile's keys from the shared credentials
// file at path (INI: [profile], key = value); ok is false when the file
// or the profile or its keys are not there.
func sharedCredentials(path, profile string) (id, secret, token string, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", "", false
	}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '[':
			name := strings.TrimSpace(strings.Trim(line, "[]"))
			in = name == profile || name == "profile "+profile
			continue
		case !in:
			continue
		}
		k, v, found := strings.Cut(line, "=")
		if !found {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "aws_access_key_id":
			id = strings.TrimSpace(v)
		case "aws_secret_access_key":
			secret = strings.TrimSpace(v)
		case "aws_session_token":
			token = strings.TrimSpace(v)
		}
	}
	return id, secret, token, id != "" && secret != ""
}
