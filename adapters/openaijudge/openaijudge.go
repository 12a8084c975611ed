// Package openaijudge is a modelapprove.Model for OpenAI-compatible chat
// completion endpoints, through github.com/openai/openai-go/v3: OpenAI
// itself, or any server that speaks the same API (a local one included),
// by its base URL.
//
// Each Complete sends one chat completion request with two messages, the
// system message and then the user message, at temperature 0, asking for
// a JSON object (response_format json_object, unless Options.PlainText),
// without retries unless Options.Retries says so. The response body is
// read up to Options.MaxResponseBytes and no further. Only what Options
// says is used: the environment (OPENAI_API_KEY, OPENAI_BASE_URL,
// HTTP_PROXY, HTTPS_PROXY, ...) is never read, so a key meant for one host
// is never sent to another. The default HTTP client connects to the base
// URL's host directly; to go through a proxy, pass an Options.HTTPClient
// that does.
//
// The answer is the first choice's message content, which must be one
// JSON string: a content of any other type, a refusal, or a response in
// which a member read (choices, message, content, refusal) appears twice,
// in any letter case, is an error.
//
// Errors say what failed (the status code, a response too long, no
// choices) and never carry the response body or the SDK's error type.
//
//	m, err := openaijudge.New("gpt-4o-mini", &openaijudge.Options{APIKey: key, Name: "screener"})
//	// decisions are recorded as model:screener, whatever serves the model
//	// or a local server: &openaijudge.Options{BaseURL: "http://127.0.0.1:8080/v1"}
//	judge, err := modelapprove.NewJudge(m, nil)
//	v := judge.Decide(ctx, c.Text(), call.Rationale)
package openaijudge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/internal/signed"
	"github.com/agentstepup/asu/stepup/modelapprove"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1/"

// ErrResponseTooLarge means the endpoint's response body was longer than
// Options.MaxResponseBytes; it was not read further.
var ErrResponseTooLarge = signed.ErrResponseTooLarge

// ErrName means the approver's name ([Options].Name, or the model's name
// when that is empty) does not make a valid principal id.
var ErrName = errors.New("openaijudge: invalid approver name")

// Options configures a [Model]; nil or zero fields take the defaults.
type Options struct {
	// BaseURL is the API's base URL, ending in the version path, e.g.
	// "http://127.0.0.1:8080/v1" (default [DefaultBaseURL]).
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none.
	APIKey string
	// HTTPClient sends the requests (default: a client of its own, with
	// http.DefaultTransport's settings but no proxy).
	HTTPClient *http.Client
	// MaxResponseBytes bounds the response body (default 64 KiB).
	MaxResponseBytes int64
	// MaxCompletionTokens bounds the answer's length in tokens; zero
	// leaves it to the server.
	MaxCompletionTokens int64
	// Retries is how many times a failed request is tried again (default
	// none: the judge's timeout bounds the whole decision, and a failure
	// is a denial).
	Retries int
	// PlainText leaves response_format out, for servers that do not
	// support JSON mode.
	PlainText bool
	// Name is the model approver's principal name without its kind: the
	// gate records the model's decisions as "model:<Name>"
	// (gate.WithModelJudge). It must make a valid principal id (a-z, 0-9
	// and ._@+-, starting with a letter or digit) and stays the same
	// whatever host or port serves the model, so an audit reader can
	// tell one judge from another by it. Empty means the model's name,
	// which New then requires to be valid so.
	Name string
}

// Model asks one model on an OpenAI-compatible endpoint. It implements
// modelapprove.Model and is safe for concurrent use.
type Model struct {
	name      string
	id        string
	o         Options
	completer oai.ChatCompletionService
}

var _ modelapprove.Model = (*Model)(nil)

// New returns a Model asking the model named name. opts may be nil.
func New(name string, opts *Options) (*Model, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New("openaijudge: no model name")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return nil, errors.New("openaijudge: base URL is not an absolute http(s) URL without user information")
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 64 << 10
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	field, id := "Options.Name", o.Name
	if id == "" {
		field, id = "the model name (set Options.Name)", name
	}
	if canon.CheckPrincipalID(canon.PrefixModel+id) != nil {
		return nil, fmt.Errorf("openaijudge: %s %q does not make a valid principal id model:<name> (a-z, 0-9 and ._@+-): %w",
			field, id, ErrName)
	}
	client := o.HTTPClient
	if client == nil {
		client = &http.Client{Transport: direct()}
	}
	limit := o.MaxResponseBytes
	reqOpts := []option.RequestOption{
		option.WithBaseURL(o.BaseURL),
		option.WithHTTPClient(client),
		option.WithMaxRetries(o.Retries),
		option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			resp, err := next(req)
			if err != nil {
				return resp, err
			}
			return capBody(resp, limit)
		}),
	}
	if o.APIKey != "" {
		reqOpts = append(reqOpts, option.WithAPIKey(o.APIKey))
	}
	// The service, unlike oai.NewClient, reads no environment variables.
	return &Model{name: name, id: id, o: o, completer: oai.NewChatCompletionService(reqOpts...)}, nil
}

// direct returns a transport with http.DefaultTransport's settings and
// no proxy: the default transport's proxy is the one HTTP_PROXY and
// HTTPS_PROXY name, and over a plain-http base URL that proxy would read
// the API key.
func direct() *http.Transport {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.Proxy = nil
		return t
	}
	// A program replaced http.DefaultTransport: its settings, as of Go
	// 1.26, without the proxy.
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// capBody reads resp's body up to limit bytes, failing with
// ErrResponseTooLarge beyond.
func capBody(resp *http.Response, limit int64) (*http.Response, error) {
	defer resp.Body.Close()
	if resp.ContentLength > limit {
		return nil, ErrResponseTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("openaijudge: reading the response failed: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, ErrResponseTooLarge
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	return resp, nil
}

// ID returns the approver's name the gate records as "model:<ID>":
// Options.Name, or the model's name when that is empty. A Model not made
// by New has none.
func (m *Model) ID() string {
	if m == nil {
		return ""
	}
	return m.id
}

// errNoModel is the error of a Model not made by New: it has no endpoint
// or name of its own, and asks nobody.
var errNoModel = errors.New("openaijudge: the Model was not made by New")

// Complete sends system and user as the conversation's two messages and
// returns the first choice's content.
func (m *Model) Complete(ctx context.Context, system, user string) (string, error) {
	if m == nil || m.name == "" {
		return "", errNoModel
	}
	if ctx == nil {
		ctx = context.Background()
	}
	p := oai.ChatCompletionNewParams{
		Model: m.name,
		Messages: []oai.ChatCompletionMessageParamUnion{
			oai.SystemMessage(system),
			oai.UserMessage(user),
		},
		Temperature: oai.Float(0),
	}
	if m.o.MaxCompletionTokens > 0 {
		p.MaxCompletionTokens = oai.Int(m.o.MaxCompletionTokens)
	}
	if !m.o.PlainText {
		p.ResponseFormat = oai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	}
	// The body is read here rather than by the SDK, whose decoder takes
	// a content of any JSON type as its text and the first of two
	// members of one name.
	var body []byte
	_, err := m.completer.New(ctx, p, option.WithResponseBodyInto(&body))
	if err != nil {
		var apiErr *oai.Error
		var urlErr *url.Error
		switch {
		case ctx.Err() != nil:
			return "", ctx.Err()
		case errors.Is(err, ErrResponseTooLarge):
			return "", ErrResponseTooLarge
		case errors.As(err, &apiErr):
			return "", fmt.Errorf("openaijudge: status %d", apiErr.StatusCode)
		case errors.As(err, &urlErr):
			return "", fmt.Errorf("openaijudge: request failed: %v", urlErr.Err)
		default:
			return "", errors.New("openaijudge: response unreadable")
		}
	}
	return answer(body)
}
