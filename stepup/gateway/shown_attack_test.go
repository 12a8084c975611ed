package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/gateway"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// fixedSessions says every request is signed in as who.
type fixedSessions struct{ who string }

func (f fixedSessions) SignedIn(*http.Request) (string, bool) { return f.who, f.who != "" }

// shownRig is a gate with a dwell time and its approval site, with the
// options given.
func shownRig(t *testing.T, opts *gateway.SiteOptions) (*stepuptest.Harness, *httptest.Server) {
	t.Helper()
	h := stepuptest.NewGate(t, nil, gate.WithDwell(gate.DefaultDwell))
	site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), opts)
	require.NoError(t, err)
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	return h, srv
}

func proposeEmail(t *testing.T, h *stepuptest.Harness, subject string) stepup.TicketID {
	t.Helper()
	tk, err := h.Gate.Propose(context.Background(), stepup.Call{Tool: "send_email",
		Args:    json.RawMessage(fmt.Sprintf(`{"to":"finance@example.com","subject":%q}`, subject)),
		Session: subject, Principal: canon.Principal{User: stepuptest.Approver, Agent: "agent:reports"}})
	require.NoError(t, err)
	require.Equal(t, stepup.StatusPending, tk.Status)
	return tk.ID
}

// neverShown checks that no attempt started ticket id's dwell: long after,
// an approval is still refused as too fast.
func neverShown(t *testing.T, h *stepuptest.Harness, id stepup.TicketID) {
	t.Helper()
	h.Clock.Advance(2 * gate.DefaultDwell)
	_, err := h.Approve(id)
	assert.ErrorIs(t, err, stepup.ErrTooFast, "something other than the ticket's page started its dwell")
}

func viewBody(token string) []byte {
	b, _ := json.Marshal(map[string]string{"view": token})
	return b
}

func tokenOf(t *testing.T, body []byte) string {
	t.Helper()
	var v struct{ View string }
	require.NoError(t, json.Unmarshal(body, &v))
	return v.View
}

// TestOnlyTheTicketsPageSaysItIsShown: every way a client that did not
// render the ticket's page, or is not a signed-in approver of it, could
// say its card is shown is refused, and none starts the dwell: no token,
// an empty or malformed one, random ones, another ticket's, one with any
// bit flipped, cut or lengthened, one made under another site's key, any
// browser headers, a session of someone who may not decide the ticket.
func TestOnlyTheTicketsPageSaysItIsShown(t *testing.T) {
	h, srv := shownRig(t, &gateway.SiteOptions{Sessions: fixedSessions{"agent:reports"}})
	otherSite, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), nil) // a key of its own
	require.NoError(t, err)
	other := httptest.NewServer(otherSite)
	t.Cleanup(other.Close)
	id := proposeEmail(t, h, "target")
	elsewhere := proposeEmail(t, h, "elsewhere")
	good := tokenOf(t, pageView(t, srv.URL, id))
	otherTicket := tokenOf(t, pageView(t, srv.URL, elsewhere))
	raw, err := base64.RawURLEncoding.DecodeString(good)
	require.NoError(t, err)

	bodies := map[string][]byte{
		"no body":          nil,
		"empty object":     []byte(`{}`),
		"empty token":      viewBody(""),
		"null token":       []byte(`{"view":null}`),
		"not a string":     []byte(`{"view":1}`),
		"another ticket's": viewBody(otherTicket),
		"padded":           viewBody(good + "=="),
		"cut":              viewBody(good[:len(good)-2]),
		"lengthened":       viewBody(good + "AA"),
		"huge":             viewBody(strings.Repeat("A", 10000)),
		"repeated member":  []byte(`{"view":"x","view":` + string(viewBody(good)[8:])),
		"unknown member":   []byte(`{"view":"` + otherTicket + `","token":"` + good + `"}`),
		"token alone":      []byte(`"` + good + `"`),
		"another site's":   viewBody(tokenOf(t, pageView(t, other.URL, id))),
	}
	if std := base64.StdEncoding.EncodeToString(raw); std != good { // the same text when it holds no + or /
		bodies["std encoding"] = viewBody(std)
	}
	for i := range raw {
		for _, bit := range []byte{1, 0x80} {
			flipped := append([]byte(nil), raw...)
			flipped[i] ^= bit
			bodies[fmt.Sprintf("bit %#x of byte %d", bit, i)] = viewBody(base64.RawURLEncoding.EncodeToString(flipped))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 64 {
		b := make([]byte, len(raw))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		bodies[fmt.Sprintf("random %d", n)] = viewBody(base64.RawURLEncoding.EncodeToString(b))
	}
	origin := stepuptest.RP().Origin
	headers := []map[string]string{nil, {"Origin": origin, "Sec-Fetch-Site": "same-origin"}}
	for name, body := range bodies {
		for _, hdr := range headers {
			code, answer := sitePost(t, srv.URL, "/approve/"+string(id)+"/shown", hdr, body)
			assert.NotEqual(t, http.StatusOK, code, "%s: %s", name, answer)
			assert.NotContains(t, answer, good, "%s: a refusal quotes the token", name)
		}
	}
	resp, err := http.Get(srv.URL + "/approve/" + string(id) + "/shown")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.NotEqual(t, http.StatusOK, resp.StatusCode, "a GET says nothing")
	neverShown(t, h, id)
}

// TestTheTicketsPageSaysItIsShown: the page's own token starts the dwell,
// on this site and on a replica sharing its key; so does a signed-in
// approver who may decide the ticket.
func TestTheTicketsPageSaysItIsShown(t *testing.T) {
	key := []byte(strings.Repeat("k", gateway.MinSiteKey))
	h := stepuptest.NewGate(t, nil, gate.WithDwell(gate.DefaultDwell))
	replica := func(o *gateway.SiteOptions) *httptest.Server {
		site, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), o)
		require.NoError(t, err)
		srv := httptest.NewServer(site)
		t.Cleanup(srv.Close)
		return srv
	}
	a, b := replica(&gateway.SiteOptions{Key: key}), replica(&gateway.SiteOptions{Key: key})
	signedIn := replica(&gateway.SiteOptions{Sessions: fixedSessions{stepuptest.Approver}})
	origin := map[string]string{"Origin": stepuptest.RP().Origin}

	for name, post := range map[string]func(id stepup.TicketID) (int, string){
		"own page": func(id stepup.TicketID) (int, string) {
			return sitePost(t, a.URL, "/approve/"+string(id)+"/shown", origin, pageView(t, a.URL, id))
		},
		"replica's page": func(id stepup.TicketID) (int, string) {
			return sitePost(t, b.URL, "/approve/"+string(id)+"/shown", origin, pageView(t, a.URL, id))
		},
		"signed-in approver": func(id stepup.TicketID) (int, string) {
			return sitePost(t, signedIn.URL, "/approve/"+string(id)+"/shown", origin, []byte(`{}`))
		},
	} {
		id := proposeEmail(t, h, name)
		code, body := post(id)
		require.Equal(t, http.StatusOK, code, "%s: %s", name, body)
		_, err := h.Approve(id)
		require.ErrorIs(t, err, stepup.ErrTooFast, "%s: within the dwell", name)
		h.Clock.Advance(gate.DefaultDwell)
		_, err = h.Approve(id)
		assert.NoError(t, err, name)
	}

	_, err := gateway.NewSite(h.Gate.Desk(), h.Enrollment, stepuptest.RP(), &gateway.SiteOptions{Key: key[:gateway.MinSiteKey-1]})
	assert.ErrorIs(t, err, stepup.ErrConfig, "a short key")
}
