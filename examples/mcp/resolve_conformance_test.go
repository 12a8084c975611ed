package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/stepup"
	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/mcpgate"
	"github.com/agentstepup/asu/stepup/stepuptest"
)

// TestEndToEndResolverConformance writes generated spellings of paths
// through the gateway into the real @modelcontextprotocol/server-filesystem
// and compares what the approver's passkey signed with what the server
// wrote. The server serves a directory S; the gateway's -root is S/root
// inside it, its home S/root/home. For every spelling (~, ~/.., NFD and
// NFC, full width, mixed case, relative, through symbolic links, traversal
// after expansion), either the write is refused before anyone is asked,
// or the signed effect's reference names, by its Target (or its name),
// exactly the one file the server changed, with the digest of what that
// file held before. Nothing outside the root ever changes.
func TestEndToEndResolverConformance(t *testing.T) {
	skipUnlessE2E(t)
	h := startConformance(t, nil)
	spellings := conformanceSpellings(h.served, rand.New(rand.NewPCG(28, 1)))
	require.Greater(t, len(spellings), 60)
	counts, reasons := map[string]int{}, map[string]int{}
	for i, name := range spellings {
		outcome, violations := h.check(t, name, fmt.Sprintf("written by spelling %d", i))
		counts[outcome]++
		if outcome == refusedBefore {
			reasons[h.last.text]++
		}
		assert.Empty(t, violations, "%q", name)
	}
	t.Logf("%d spellings: %v; refusals: %v", len(spellings), counts, reasons)
	assert.Greater(t, counts[refusedBefore], 10)
	assert.Greater(t, counts["approved, target shown"], 10)
}

// TestEndToEndResolverConformanceBitesNaive: the same check finds the
// attacks of the issue against the byte-for-byte resolver the gateway
// had: "~/home_target.txt" and an NFD spelling of an existing NFC file
// were bound as absent and overwrote the file, and a relative name,
// which the server resolves against the directory it serves, not the
// gateway's root inside it, was written outside the root.
func TestEndToEndResolverConformanceBitesNaive(t *testing.T) {
	skipUnlessE2E(t)
	h := startConformance(t, func(root string) canon.Resolver { return naivePaths{root: root} })
	for i, name := range []string{"~/home_target.txt", h.served + "/root/re\u0301sume\u0301.txt", "root/../escape.txt"} {
		outcome, violations := h.check(t, name, fmt.Sprintf("naive %d", i))
		assert.NotEmpty(t, violations, "%q (%s) passed against the naive resolver", name, outcome)
	}
}

const refusedBefore = "refused before approval"

// check writes name through the gateway and reports how it ended and
// every way what ran differs from what the person signed.
func (h *conformanceHost) check(t *testing.T, name, content string) (string, []string) {
	before := snapshot(t, h.served)
	out := h.write(t, name, content)
	h.last = out
	after := snapshot(t, h.served)
	changed := diff(before, after)
	var bad []string
	for _, p := range changed {
		if _, in := under(h.root, p); !in {
			bad = append(bad, "changed "+p+", outside the root")
		}
	}
	switch {
	case out.ticket == "":
		if !out.isError {
			bad = append(bad, "ran without approval: "+out.text)
		}
		if len(changed) > 0 {
			bad = append(bad, fmt.Sprintf("refused, yet changed %v", changed))
		}
		return refusedBefore, bad
	case out.isError:
		if len(changed) > 0 {
			bad = append(bad, fmt.Sprintf("failed at the server (%s), yet changed %v", out.text, changed))
		}
		return "approved, then refused by the server", bad
	}
	ref := out.ref
	bound, outcome := ref.Target, "approved, target shown"
	if bound == "" {
		bound, outcome = ref.Name, "approved, name is the target"
	}
	switch {
	case !slices.Equal(changed, []string{bound}):
		bad = append(bad, fmt.Sprintf("signed target %s, but the server changed %v", bound, changed))
	case after[bound] != "file:"+hexSum([]byte(content)):
		bad = append(bad, "the signed target does not hold what was written")
	case ref.Size < 0 && before[bound] != "":
		bad = append(bad, "bound as absent, but "+bound+" existed")
	case ref.Size >= 0 && before[bound] != "file:"+ref.SHA256.String():
		bad = append(bad, "the signed digest is not of what "+bound+" held")
	}
	if ref.Target != "" && !strings.Contains(out.card, `"target":{`) {
		bad = append(bad, "the card does not show the target")
	}
	return outcome, bad
}

// naivePaths is the byte-for-byte resolver the gateway had: a name
// relative to the root or absolute under it, looked up as spelled.
type naivePaths struct{ root string }

func (n naivePaths) Resolve(ctx context.Context, r canon.Ref) (canon.Ref, error) {
	name := r.Name
	if filepath.IsAbs(name) {
		rel, err := filepath.Rel(n.root, name)
		if err != nil {
			return canon.Ref{}, err
		}
		name = rel
	}
	got, err := canon.FileResolver{Root: n.root}.Resolve(ctx, canon.Ref{Name: name, Kind: "file"})
	if errors.Is(err, fs.ErrNotExist) {
		return canon.Ref{Name: r.Name, Kind: r.Kind, SHA256: mcpgate.AbsentDigest, Size: -1}, nil
	}
	if err != nil {
		return canon.Ref{}, err
	}
	return canon.Ref{Name: r.Name, Kind: r.Kind, SHA256: got.SHA256, Size: got.Size}, nil
}

// seedConformanceTree lays out the served directory: an NFC file and
// directory, a file in the home, links in the root (to a file in it, to
// the served directory, to a secret outside the root), the secret.
func seedConformanceTree(t *testing.T, served string) {
	root := filepath.Join(served, "root")
	for name, body := range map[string]string{
		"root/home/home_target.txt": "home target",
		"root/r\u00e9sum\u00e9.txt": "resume",
		"root/caf\u00e9/menu.txt":   "menu",
		"root/real.txt":             "real",
		"root/Mixed.txt":            "mixed",
		"root/sub/inner.txt":        "inner",
		"secret.txt":                "secret",
	} {
		p := filepath.Join(served, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	}
	require.NoError(t, os.Symlink(filepath.Join(root, "real.txt"), filepath.Join(root, "link.txt")))
	require.NoError(t, os.Symlink(served, filepath.Join(root, "up")))
	require.NoError(t, os.Symlink(filepath.Join(served, "secret.txt"), filepath.Join(root, "secret-link.txt")))
}

// conformanceSpellings generates spellings of targets in and out of the
// root, each transformation of a path applied alone and in pairs, then
// shuffled.
func conformanceSpellings(served string, rng *rand.Rand) []string {
	targets := []string{ // relative to the served directory
		"root/home/home_target.txt", "root/r\u00e9sum\u00e9.txt", "root/caf\u00e9/menu.txt", "root/real.txt",
		"root/Mixed.txt", "root/sub/inner.txt", "root/new.txt", "root/caf\u00e9/new.txt", "root/home/new.txt",
		"root/link.txt", "root/secret-link.txt", "secret.txt", "escape.txt",
	}
	spell := map[string]func(string) string{
		"absolute":   func(p string) string { return served + "/" + p },
		"relative":   func(p string) string { return p },
		"home":       func(p string) string { return "~/../../" + p },
		"home+":      func(p string) string { return strings.Replace("~/"+p, "~/root/home/", "~/", 1) },
		"traversal":  func(p string) string { return "~/../../root/sub/../../" + p },
		"via link":   func(p string) string { return "root/up/" + p },
		"dot":        func(p string) string { return strings.Replace(p, "/", "/./", 1) },
		"double":     func(p string) string { return strings.Replace(p, "/", "//", 1) },
		"trailing /": func(p string) string { return p + "/" },
	}
	shape := map[string]func(string) string{
		"as is":      func(p string) string { return p },
		"NFD":        norm.NFD.String,
		"mixed form": mixedForm,
		"full width": fullWidthLast,
		"case":       swapCaseLast,
		"new name":   func(p string) string { return p + ".new" },
	}
	seen := map[string]bool{}
	var out []string
	for _, target := range targets {
		for _, s := range sortedNames(spell) {
			for _, sh := range sortedNames(shape) {
				name := spell[s](shape[sh](target))
				if !seen[name] && rng.IntN(3) > 0 { // two in three, to keep the run short
					seen[name] = true
					out = append(out, name)
				}
			}
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// mixedForm decomposes only the first precomposed letter, so the name is
// neither NFC nor NFD.
func mixedForm(p string) string {
	for i, r := range p {
		if d := norm.NFD.String(string(r)); d != string(r) {
			return p[:i] + d + p[i+len(string(r)):]
		}
	}
	return p
}

// fullWidthLast writes the letters of the last component in full width.
func fullWidthLast(p string) string {
	i := strings.LastIndexByte(p, '/') + 1
	var b strings.Builder
	for _, r := range p[i:] {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			r += 0xFF21 - 'A'
		}
		b.WriteRune(r)
	}
	return p[:i] + b.String()
}

// swapCaseLast swaps the letter case of the last component.
func swapCaseLast(p string) string {
	i := strings.LastIndexByte(p, '/') + 1
	return p[:i] + strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, p[i:])
}

// snapshot maps every entry under dir to what it is: "dir", "link:" and
// its target, or "file:" and its content's SHA-256.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[p] = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[p] = "link:" + l
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = "file:" + hexSum(b)
		}
		return nil
	}))
	return out
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return canon.Digest(s).String()
}

// diff lists the entries added, removed or changed, sorted.
func diff(before, after map[string]string) []string {
	var out []string
	for p, v := range after {
		if before[p] != v {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func under(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	return rel, err == nil && filepath.IsLocal(rel)
}

// conformanceHost is a host session of a gateway in front of the real
// filesystem server, with the approver watching the gateway's log for
// approval links.
type conformanceHost struct {
	cs           *mcp.ClientSession
	r            ready
	pk           *stepuptest.Authenticator
	pending      chan stepup.TicketID
	served, root string
	last         conformanceOut
}

// conformanceOut is what one write came to: its ticket if it waited for
// a person, the reference the person's passkey signed, the card's JSON.
type conformanceOut struct {
	ticket  stepup.TicketID
	ref     canon.Ref
	card    string
	isError bool
	text    string
}

func startConformance(t *testing.T, resolver func(root string) canon.Resolver) *conformanceHost {
	t.Helper()
	node, err := exec.LookPath("node")
	require.NoError(t, err)
	served, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	h := &conformanceHost{served: served, root: filepath.Join(served, "root"), pending: make(chan stepup.TicketID, 4)}
	seedConformanceTree(t, served)
	t.Setenv("HOME", filepath.Join(h.root, "home")) // the server inherits the gateway's environment
	o := defaults()
	o.upstreamCmd = []string{node, "e2e/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", served}
	o.catalog, o.root, o.upstreamDir = "e2e/filesystem.catalog.json", h.root, served
	o.wait, o.approver = 30*time.Second, ""
	// Hundreds of approvals in a minute from one session: flood control
	// would rightly stop them, and it is not what is tested here.
	o.gateOptions = []gate.Option{gate.WithoutFloodControlUnsafe()}
	if resolver != nil {
		o.gateOptions = append(o.gateOptions, gate.WithResolver(resolver(h.root)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	tap := &linkTap{onLink: func(id stepup.TicketID) { h.pending <- id }}
	st, ct := mcp.NewInMemoryTransports()
	readyc, done := make(chan ready, 1), make(chan error, 1)
	go func() { done <- run(ctx, o, st, tap, func(r ready) { readyc <- r }) }()
	select {
	case h.r = <-readyc:
	case err := <-done:
		cancel()
		t.Fatalf("gateway did not start: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	h.cs, h.pk = cs, enrollAt(t, h.r)
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		<-done
	})
	return h
}

// write calls write_file through the gateway; when it waits for a person,
// the approver reads the signed reference and approves with the passkey.
func (h *conformanceHost) write(t *testing.T, name, content string) conformanceOut {
	t.Helper()
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file",
			Arguments: map[string]any{"path": name, "content": content}})
		done <- result{res, err}
	}()
	var out conformanceOut
	var res result
	select {
	case res = <-done:
	case id := <-h.pending:
		out.ticket = id
		ctx := context.Background()
		desk := h.r.gate.Desk()
		p, err := desk.Prompt(ctx, id)
		require.NoError(t, err)
		out.card = string(p.CardJSON)
		answer, err := h.pk.Assert(p.Options)
		require.NoError(t, err)
		_, err = desk.Approve(ctx, id, answer)
		require.NoError(t, err)
		rc, err := desk.Receipt(ctx, id)
		require.NoError(t, err)
		eff, err := canon.ParseEffect(rc.Effect)
		require.NoError(t, err)
		require.Len(t, eff.Refs, 1)
		out.ref = eff.Refs[0]
		select {
		case res = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%q: no answer after approval", name)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%q: neither an answer nor an approval link", name)
	}
	require.NoError(t, res.err, name)
	out.isError, out.text = res.res.IsError, resultText(res.res)
	return out
}

// linkTap is the gateway's log: it finds the approval links in it.
type linkTap struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	onLink func(stepup.TicketID)
}

func (l *linkTap) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.WriteString(line) // an incomplete line waits for its end
			return len(p), nil
		}
		if _, link, ok := strings.Cut(line, "approval needed: "); ok {
			l.onLink(stepup.TicketID(strings.TrimSpace(link[strings.LastIndex(link, "/")+1:])))
		}
	}
}
