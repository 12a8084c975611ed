package gate_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/policy"
	"github.com/agentstepup/asu/stepup/stepuptest"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

// scribbles writes over every byte and string of the slices it holds: what
// a caller or plug-in can do to anything the gate hands it, then or later.
type scribbles struct {
	bytes   [][]byte
	strings [][]string
	refs    [][]canon.Ref
}

func (s *scribbles) keep(b []byte, strs ...[]string) {
	s.bytes = append(s.bytes, b)
	s.strings = append(s.strings, strs...)
}

func (s *scribbles) scribble() {
	for _, b := range s.bytes {
		for i := range b {
			b[i] = 'X'
		}
	}
	for _, strs := range s.strings {
		for i := range strs {
			strs[i] = "user:mallory"
		}
	}
	for _, refs := range s.refs {
		for i := range refs {
			refs[i].Name, refs[i].SHA256, refs[i].Size = "other.csv", canon.Sum([]byte("other")), 5
		}
	}
}

// scribblingPolicy is the seed catalog, but it writes over everything a
// proposal hands it once it has decided, and keeps it all to write over
// again later, with the slices of the decision it returned.
type scribblingPolicy struct {
	cat *policy.Catalog
	s   *scribbles
}

func (p scribblingPolicy) Decide(ctx context.Context, pr plug.Proposal) (plug.Decision, error) {
	d, err := p.cat.Decide(ctx, pr)
	p.after(pr, d)
	return d, err
}

// after writes over the proposal at once, and keeps the slices of the
// decision to write over at the next step, once the gate has read them.
func (p scribblingPolicy) after(pr plug.Proposal, d plug.Decision) {
	p.s.keep(pr.Args, pr.Principal.Delegations, pr.Taint)
	p.s.scribble()
	p.s.keep(nil, d.Trusted)
	p.s.refs = append(p.s.refs, d.Refs)
}

// parsedScribblingPolicy is scribblingPolicy as a plug.ParsedDecider.
type parsedScribblingPolicy struct{ scribblingPolicy }

func (p parsedScribblingPolicy) DecideParsed(ctx context.Context, pr plug.Proposal) (plug.Decision, error) {
	d, err := p.cat.DecideParsed(ctx, pr)
	p.after(pr, d)
	return d, err
}

// scribblingExecutor records the canonical form of each effect it runs,
// then writes over the effect.
type scribblingExecutor struct {
	s   *scribbles
	ran *[][]byte
}

func (x scribblingExecutor) Execute(_ context.Context, e canon.Effect, _ string) ([]byte, error) {
	c, err := e.Canonical()
	if err != nil {
		return nil, err
	}
	*x.ran = append(*x.ran, c)
	x.s.keep(e.Args, e.Principal.Delegations)
	x.s.refs = append(x.s.refs, e.Refs)
	x.s.scribble()
	return []byte(`{}`), nil
}

// TestNothingHandedOutReachesTheSealedEffect: the policy (either kind),
// the executor and the caller write over every slice the gate hands them
// or takes from them, at once and again at every later step; what runs is
// still, byte for byte, the canonical effect of the call as proposed, its
// digest the one the ticket names and the approver signed, and the
// store's row still holds exactly those bytes.
//
// The gate shares the sealed effect by reference (the parse's buffer is
// the sealed effect's, and the store keeps that buffer), so this fails
// against a gate that hands any of it out: a policy given the parsed
// text itself as Proposal.Args writes X over the sealed arguments (the
// executor runs them, or Execute refuses the changed effect), and an
// executor given the stored bytes writes X over the store's row.
func TestNothingHandedOutReachesTheSealedEffect(t *testing.T) {
	for _, parsedOnly := range []bool{false, true} {
		for _, call := range []stepup.Call{
			sizedDraft(1, 64<<10), // allowed by the policy
			{Tool: "send_email", Args: json.RawMessage(`{"to":"finance@example.com","subject":"Q3 ` + strings.Repeat("numbers ", 100) + `","attachment":"q3.csv"}`),
				Task: "t-42", Step: "s-1", Session: "sess-1", Taint: []string{"web"},
				Principal: canon.Principal{User: "user:dana", Agent: "agent:reports", Delegations: []string{"agent:ops"}}},
		} {
			t.Run(call.Tool+map[bool]string{false: "/text", true: "/parsed"}[parsedOnly], func(t *testing.T) {
				ctx := context.Background()
				dir := t.TempDir()
				require.NoError(t, os.WriteFile(filepath.Join(dir, "q3.csv"), []byte(stepuptest.Q3), 0o600))
				resolver := canon.FileResolver{Root: dir}
				s := &scribbles{}
				var pol plug.Policy = scribblingPolicy{stepuptest.SeedCatalog(), s}
				if parsedOnly {
					pol = parsedScribblingPolicy{scribblingPolicy{stepuptest.SeedCatalog(), s}}
				}
				var ran [][]byte
				h := stepuptest.NewGateWith(t, pol, nil, gate.WithResolver(resolver),
					gate.WithExecutor(call.Tool, scribblingExecutor{s, &ran}))

				// What must run, worked out apart from the gate.
				d, err := stepuptest.SeedCatalog().Decide(ctx, plug.Proposal{Tool: call.Tool, Args: call.Args, Principal: call.Principal, Taint: call.Taint})
				require.NoError(t, err)
				refs, err := canon.ResolveAll(ctx, resolver, d.Refs)
				require.NoError(t, err)
				want, err := canon.Seal(canon.Effect{Tool: call.Tool, Args: call.Args, Refs: refs, Task: call.Task, Step: call.Step,
					Principal: call.Principal, PolicyVersion: d.PolicyVersion, Audience: d.Audience})
				require.NoError(t, err)

				c := call
				c.Args = append(json.RawMessage(nil), call.Args...)
				c.Principal.Delegations = append([]string(nil), call.Principal.Delegations...)
				c.Taint = append([]string(nil), call.Taint...)
				tk, err := h.Gate.Propose(ctx, c)
				require.NoError(t, err)
				s.keep(c.Args, c.Principal.Delegations, c.Taint) // the caller's own
				s.scribble()
				assert.Equal(t, want.Digest(), tk.Digest, "the ticket names the digest of the call as proposed")
				if tk.Status == stepup.StatusPending {
					tk, err = h.Approve(tk.ID)
					require.NoError(t, err)
					s.scribble()
				}
				require.Contains(t, []stepup.Status{stepup.StatusAllowed, stepup.StatusApproved}, tk.Status, tk.Reason)

				_, err = h.Gate.Execute(ctx, tk.ID)
				require.NoError(t, err)
				s.scribble()
				require.Len(t, ran, 1)
				assert.Equal(t, string(want.Bytes()), string(ran[0]), "what ran is the effect as proposed")
				row, err := h.Store.Get(ctx, string(tk.ID))
				require.NoError(t, err)
				assert.Equal(t, string(want.Bytes()), string(row.Effect), "the store's row is unchanged")
				assert.Equal(t, want.Digest(), row.Digest)
			})
		}
	}
}

// parkScribbler is a store that breaks its word: it writes over the
// Effect of every ticket it parks, which a memory store shares with the
// row it keeps.
type parkScribbler struct{ store.Store }

func (p parkScribbler) Park(ctx context.Context, a store.Approval, c store.Caps, n store.Note) (store.Approval, bool, error) {
	got, merged, err := p.Store.Park(ctx, a, c, n)
	for i := range a.Effect {
		a.Effect[i] = 'X'
	}
	return got, merged, err
}

// TestStoreWritingTheParkedEffectIsRefused: a store that writes into the
// effect it was handed to park (the sealed bytes themselves, which it
// must keep unchanged) changes nothing that runs: Execute finds the
// stored effect no longer hashes as approved and refuses it.
func TestStoreWritingTheParkedEffectIsRefused(t *testing.T) {
	ctx := context.Background()
	var ran [][]byte
	st := parkScribbler{memory.New(nil)}
	g, err := gate.New(st, stepuptest.SeedCatalog(), stepuptest.Passkeys(st),
		gate.WithExecutor("write_draft", scribblingExecutor{&scribbles{}, &ran}))
	require.NoError(t, err)
	tk, err := g.Propose(ctx, sizedDraft(1, 4<<10))
	require.NoError(t, err)
	require.Equal(t, stepup.StatusAllowed, tk.Status, tk.Reason)
	_, err = g.Execute(ctx, tk.ID)
	require.ErrorIs(t, err, stepup.ErrEffectChanged)
	assert.Empty(t, ran, "nothing ran")
}

// TestParsedDeciderGetsNoText: the gate hands a plug.ParsedDecider the
// parsed arguments alone, at Propose and when Execute asks it again, and
// any other policy their canonical text as well.
func TestParsedDeciderGetsNoText(t *testing.T) {
	ctx := context.Background()
	for _, parsedOnly := range []bool{false, true} {
		var seen []plug.Proposal
		record := func(pr plug.Proposal) { seen = append(seen, pr) }
		var pol plug.Policy = recordingPolicy{stepuptest.SeedCatalog(), record}
		if parsedOnly {
			pol = recordingParsedPolicy{recordingPolicy{stepuptest.SeedCatalog(), record}}
		}
		h := stepuptest.NewGateWith(t, pol, nil, gate.WithExecutor("write_draft", &recorder{}))
		c := sizedDraft(1, 200)
		tk, err := h.Gate.Propose(ctx, c)
		require.NoError(t, err)
		_, err = h.Gate.Execute(ctx, tk.ID)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(seen), 2, "asked at Propose and at Execute")
		want, err := canon.Canonicalize(c.Args)
		require.NoError(t, err)
		for _, pr := range seen {
			assert.Equal(t, string(want), pr.Parsed.Canonical())
			if parsedOnly {
				assert.Nil(t, pr.Args)
			} else {
				assert.Equal(t, string(want), string(pr.Args))
			}
		}
	}
}

type recordingPolicy struct {
	cat    *policy.Catalog
	record func(plug.Proposal)
}

func (p recordingPolicy) Decide(ctx context.Context, pr plug.Proposal) (plug.Decision, error) {
	p.record(pr)
	return p.cat.Decide(ctx, pr)
}

type recordingParsedPolicy struct{ recordingPolicy }

func (p recordingParsedPolicy) DecideParsed(ctx context.Context, pr plug.Proposal) (plug.Decision, error) {
	p.record(pr)
	return p.cat.DecideParsed(ctx, pr)
}
