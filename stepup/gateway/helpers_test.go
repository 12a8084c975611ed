package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/remote"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// recorder is an executor that counts what it ran.
type recorder struct {
	mu   sync.Mutex
	runs int
}

func (r *recorder) Execute(context.Context, canon.Effect, string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs++
	return []byte(`{"sent":true}`), nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs
}

const (
	agentToken = "tok-reports-0123456789abcdefghijklmnopqrstuvwxyz"
	otherToken = "tok-billing-0123456789abcdefghijklmnopqrstuvwxyz"
)

// rig is the reference program's setting behind HTTP: a gate with the seed catalog and
// an enrolled approver, its agent API and approval site on two test
// servers, and a Client holding agent:reports's token.
type rig struct {
	*stepuptest.Harness
	dir    string
	exec   *recorder
	api    *httptest.Server
	site   *httptest.Server
	client *remote.Client
}

func newRig(t *testing.T, opts *gateway.AgentOptions) *rig {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "q3.csv"), []byte("region,revenue\nwest,410\neast,385\n"), 0o600))
	r := &rig{dir: dir, exec: &recorder{}}
	gopts := []gate.Option{gate.WithResolver(canon.FileResolver{Root: dir})}
	for _, tool := range []string{"read_file", "search_tickets", "write_draft", "send_email", "issue_refund"} {
		gopts = append(gopts, gate.WithExecutor(tool, r.exec))
	}
	r.Harness = stepuptest.NewGate(t, nil, gopts...)
	api, err := gateway.NewAgentAPI(r.Gate, []gateway.RuntimeToken{
		{Token: agentToken, Agent: "agent:reports", Users: []string{"user:dana", "user:erin"}},
		{Token: otherToken, Agent: "agent:billing", Users: []string{"user:dana"}},
	}, opts)
	require.NoError(t, err)
	site, err := gateway.NewSite(r.Gate.Desk(), r.Enrollment, stepuptest.RP(), &gateway.SiteOptions{Tickets: r.Gate})
	require.NoError(t, err)
	r.api = httptest.NewServer(api)
	r.site = httptest.NewServer(site)
	t.Cleanup(r.api.Close)
	t.Cleanup(r.site.Close)
	r.client, err = remote.NewClient(r.api.URL, agentToken, r.api.Client())
	require.NoError(t, err)
	return r
}

func sendEmail(to string) stepup.Call {
	return stepup.Call{
		Tool: "send_email",
		Args: json.RawMessage(`{"to":"` + to + `","subject":"Q3 summary","attachment":"q3.csv"}`),
		Task: "t-42", Step: "s-1", Session: "sess-1",
		Principal: canon.Principal{User: "user:dana", Agent: "agent:reports"},
	}
}

var viewAttr = regexp.MustCompile(`data-view="([^"]*)"`)

// pageView fetches the approval page of id at base, as the approver's
// browser does, and returns the body its script posts to say the card is
// shown: the page's view token.
func pageView(t *testing.T, base string, id stepup.TicketID) []byte {
	t.Helper()
	resp, err := http.Get(gateway.ApprovalLink(base, id))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	m := viewAttr.FindStringSubmatch(string(body))
	require.NotNil(t, m, "the page carries no view token")
	out, err := json.Marshal(map[string]string{"view": html.UnescapeString(m[1])})
	require.NoError(t, err)
	return out
}

var dataAttr = regexp.MustCompile(`data-(approve|deny)="([^"]*)"`)

// pageOptions fetches the approval page of id and returns its approve and
// deny request options, as the page's script would read them.
func (r *rig) pageOptions(t *testing.T, id stepup.TicketID) (approve, deny []byte) {
	t.Helper()
	resp, err := http.Get(gateway.ApprovalLink(r.site.URL, id))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	for _, m := range dataAttr.FindAllStringSubmatch(string(body), -1) {
		v := []byte(html.UnescapeString(m[2]))
		if m[1] == "approve" {
			approve = v
		} else {
			deny = v
		}
	}
	require.NotEmpty(t, approve)
	require.NotEmpty(t, deny)
	return approve, deny
}

// post sends a JSON body to the approval site as the site's own page would.
func (r *rig) post(t *testing.T, path string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.site.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", stepuptest.RP().Origin)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, out
}

// approveOverHTTP opens the approval page, signs its approve options with
// the approver's passkey and posts the assertion.
func (r *rig) approveOverHTTP(t *testing.T, id stepup.TicketID) {
	t.Helper()
	opts, _ := r.pageOptions(t, id)
	assertion, err := r.Authenticator.Assert(opts)
	require.NoError(t, err)
	resp, body := r.post(t, "/approve/"+string(id), assertion)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
}

// page fetches a page of the approval site and returns its status and body.
func (r *rig) page(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(r.site.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// errCode returns the code of a gateway refusal.
func errCode(t *testing.T, err error) string {
	t.Helper()
	var e *remote.Error
	require.ErrorAs(t, err, &e)
	return e.Code
}
