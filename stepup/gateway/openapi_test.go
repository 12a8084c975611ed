package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
)

// spec is the agent API's OpenAPI document, loaded and validated as an
// OpenAPI 3.1 document, and a router over it.
func spec(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(gateway.OpenAPI())
	require.NoError(t, err)
	require.True(t, doc.IsOpenAPI31OrLater(), "an OpenAPI 3.1 document")
	require.NoError(t, doc.Validate(loader.Context), "the document is valid OpenAPI")
	doc.Servers = nil // match any host the tests listen on
	router, err := legacy.NewRouter(doc)
	require.NoError(t, err)
	return doc, router
}

// validating is a transport that holds every exchange with the agent API
// to the document: each response always, each request unless the test
// sends it malformed on purpose.
type validating struct {
	t      *testing.T
	router routers.Router
	mu     sync.Mutex
	seen   map[string]bool // "operation status" pairs exchanged
	lax    bool            // requests are malformed on purpose
}

func (v *validating) RoundTrip(req *http.Request) (*http.Response, error) {
	t := v.t
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	route, params, err := v.router.FindRoute(req)
	require.NoError(t, err, "%s %s is a route of the document", req.Method, req.URL.Path)
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	v.mu.Lock()
	lax := v.lax
	v.mu.Unlock()
	if !lax {
		require.NoError(t, openapi3filter.ValidateRequest(context.Background(), in), "request %s %s: %s", req.Method, req.URL.Path, body)
	}
	req.Body = http.NoBody
	if len(body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	resp.Body = io.NopCloser(bytes.NewReader(out))
	rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	rin.SetBodyBytes(out)
	require.NoError(t, openapi3filter.ValidateResponse(context.Background(), rin), "response %d to %s %s: %s", resp.StatusCode, req.Method, req.URL.Path, out)
	v.mu.Lock()
	v.seen[route.Operation.OperationID+" "+http.StatusText(resp.StatusCode)] = true
	v.mu.Unlock()
	return resp, nil
}

func (v *validating) setLax(lax bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.lax = lax
}

// TestOpenAPIHoldsToTheHandler runs the agent API's routes, answered and
// refused, through a transport that validates every request and response
// against the OpenAPI document.
func TestOpenAPIHoldsToTheHandler(t *testing.T) {
	_, router := spec(t)
	r := newRig(t, nil)
	v := &validating{t: t, router: router, seen: map[string]bool{}}
	hc := &http.Client{Transport: v}
	c, err := remote.NewClient(r.api.URL, agentToken, hc)
	require.NoError(t, err)
	ctx := t.Context()

	// allowed, executed; executed again: consumed
	read := stepup.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"q3.csv"}`), Session: "s-1",
		Principal: sendEmail("x@example.com").Principal}
	tk, err := c.Propose(ctx, read)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, tk.Status)
	_, err = c.Execute(ctx, tk.ID)
	require.NoError(t, err)
	_, err = c.Execute(ctx, tk.ID)
	require.Error(t, err)
	// denied at once
	deny := read
	deny.Tool = "drop_database"
	tk, err = c.Propose(ctx, deny)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusDenied, tk.Status)
	// pending, waited on (bounded), approved over the site, waited, executed
	tk, err = c.Propose(ctx, sendEmail("finance@example.com"))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	resp, err := hc.Get(r.api.URL + "/v1/tickets/" + string(tk.ID) + "/wait?timeout=10ms")
	require.NoError(t, err)
	resp.Body.Close()
	_, err = c.Execute(ctx, tk.ID)
	require.Error(t, err, "not approved yet")
	r.approveOverHTTP(t, tk.ID)
	got, err := c.Wait(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, stepup.StatusApproved, got.Status)
	_, err = c.Execute(ctx, tk.ID)
	require.NoError(t, err)
	// cancelled, then cancelled again; an unknown ticket
	tk, err = c.Propose(ctx, sendEmail("board@example.com"))
	require.NoError(t, err)
	_, err = c.Cancel(ctx, tk.ID, "not needed")
	require.NoError(t, err)
	_, err = c.Cancel(ctx, tk.ID, "")
	require.Error(t, err)
	_, err = c.Wait(ctx, "t_unknown")
	require.Error(t, err)
	// the document itself
	resp, err = hc.Get(r.api.URL + gateway.OpenAPIPath)
	require.NoError(t, err)
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, gateway.OpenAPI(), doc)

	// Refusals of malformed requests: their answers hold to the document.
	v.setLax(true)
	for _, tc := range []struct {
		method, path, token, body string
		status                    int
	}{
		{"POST", "/v1/propose", "", `{}`, http.StatusUnauthorized},
		{"POST", "/v1/propose", "wrong-token", `{}`, http.StatusUnauthorized},
		{"POST", "/v1/propose", agentToken, `{"tool":"read_file","args":[],"session":"s","principal":{"user":"user:dana","agent":"agent:reports"}}`, http.StatusOK}, // denied
		{"POST", "/v1/propose", agentToken, `{"Tool":"read_file"}`, http.StatusBadRequest},
		{"POST", "/v1/propose", agentToken, `{"tool":"read_file","args":{},"session":"s","principal":{"user":"user:dana","agent":"agent:billing"}}`, http.StatusForbidden},
		{"POST", "/v1/propose", agentToken, strings.Repeat(" ", gateway.MaxCallBytes+1), http.StatusRequestEntityTooLarge},
		{"GET", "/v1/tickets/t_x/wait?timeout=soon", agentToken, "", http.StatusBadRequest},
		{"POST", "/v1/tickets/t_x/execute", agentToken, `{"args":{}}`, http.StatusBadRequest},
		{"POST", "/v1/tickets/t_x/execute", agentToken, "", http.StatusNotFound},
		{"POST", "/v1/tickets/t_x/cancel", agentToken, `{"why":1}`, http.StatusBadRequest},
	} {
		req, err := http.NewRequest(tc.method, r.api.URL+tc.path, strings.NewReader(tc.body))
		require.NoError(t, err)
		if tc.body == "" {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		req.Header.Set("Content-Type", "application/json")
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := hc.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, tc.status, resp.StatusCode, "%s %s %.40s", tc.method, tc.path, tc.body)
	}
	for _, want := range []string{"propose OK", "execute OK", "wait OK", "cancel OK", "openapi OK",
		"execute Conflict", "propose Unauthorized", "propose Bad Request", "propose Forbidden", "wait Not Found"} {
		assert.True(t, v.seen[want], "exchanged %s", want)
	}
}

// TestOpenAPIListsEveryErrorCode keeps the document's list of codes as
// long as the handler's.
func TestOpenAPIListsEveryErrorCode(t *testing.T) {
	doc, _ := spec(t)
	desc := doc.Components.Schemas["Error"].Value.Properties["error"].Value.Properties["code"].Value.Description
	listed := strings.Split(strings.TrimSuffix(strings.TrimPrefix(desc, "Stable: "), "."), ", ")
	for _, c := range append(remote.RuntimeCodes(), remote.Code{Code: gateway.CodeUnknownCred}, remote.Code{Code: gateway.CodeCounter}, remote.Code{Code: gateway.CodeInvite}) {
		assert.Contains(t, listed, c.Code)
	}
}

// TestOpenAPIRefusesWhatTheHandlerRefuses checks that the validator bites:
// a response that breaks the document is caught.
func TestOpenAPIRefusesWhatTheHandlerRefuses(t *testing.T) {
	_, router := spec(t)
	req, err := http.NewRequest(http.MethodPost, "http://x/v1/propose", strings.NewReader(`{"tool":"read_file","args":{},"principal":{"user":"u","agent":"a"}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	route, params, err := router.FindRoute(req)
	require.NoError(t, err)
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	for _, body := range []string{`{"id":"t","status":"maybe","tool":"x"}`, `{"id":"t","tool":"x"}`, `{"id":"t","status":"allowed","tool":"x","args":{}}`} {
		rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: 200,
			Header: http.Header{"Content-Type": {"application/json"}}, Options: &openapi3filter.Options{IncludeResponseStatus: true}}
		rin.SetBodyBytes([]byte(body))
		assert.Error(t, openapi3filter.ValidateResponse(context.Background(), rin), body)
	}
	// Any status not listed is still a refusal in the Error shape.
	for status, body := range map[int]string{418: `{"id":"t","status":"allowed","tool":"x"}`, 599: `{"error":{}}`} {
		rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status,
			Header: http.Header{"Content-Type": {"application/json"}}, Options: &openapi3filter.Options{IncludeResponseStatus: true}}
		rin.SetBodyBytes([]byte(body))
		assert.Error(t, openapi3filter.ValidateResponse(context.Background(), rin), "%d %s", status, body)
	}
}
