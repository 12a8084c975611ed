package card_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
)

// writeFileEffect is a filesystem server's write_file whose path the
// resolver pinned to target (size -1: nothing there yet).
func writeFileEffect(name, target string, size int64) canon.Effect {
	args, _ := json.Marshal(map[string]string{"path": name, "content": "region,revenue"})
	ref := canon.Ref{Name: name, Kind: "path", Target: target, Size: size,
		SHA256: canon.Sum([]byte("region,revenue\n"))}
	return canon.Effect{Tool: "write_file", Args: args, Refs: []canon.Ref{ref}, Task: "mcp",
		Principal:     canon.Principal{User: "user:dana", Agent: "agent:reports", Delegations: []string{}},
		PolicyVersion: "2026-12-01.1", Audience: "write_file"}
}

func writeFileContext() card.Context {
	return card.Context{Title: "Write a file", Class: card.ClassIrreversible}
}

// TestCardShowsRefTarget: a reference whose name resolves to another
// spelling of the object (a home directory, another normalization) shows
// both, "NAME, which is TARGET", in every view; the name alone when there
// is no target; and a reference to nothing yet says so instead of "-1
// bytes".
func TestCardShowsRefTarget(t *testing.T) {
	c := mustRender(t, writeFileEffect("~/q3.csv", "/srv/files/q3.csv", 13), writeFileContext())
	js, err := c.JSON()
	require.NoError(t, err)
	assert.Contains(t, c.Text(), `"~/q3.csv", which is "/srv/files/q3.csv": 13 bytes, SHA-256`)
	assert.Contains(t, string(c.HTML()), ", which is ")
	assert.Contains(t, string(c.HTML()), "/srv/files/q3.csv")
	assert.Contains(t, string(js), `"target":`)

	plain := mustRender(t, writeFileEffect("/srv/files/q3.csv", "", 13), writeFileContext())
	assert.NotContains(t, plain.Text(), "which is")
	pjs, err := plain.JSON()
	require.NoError(t, err)
	assert.NotContains(t, string(pjs), `"target"`)

	absent := mustRender(t, writeFileEffect("~/new.csv", "/srv/files/new.csv", -1), writeFileContext())
	assert.Contains(t, absent.Text(), `which is "/srv/files/new.csv": nothing there yet,`)
	assert.NotContains(t, absent.Text(), "-1 bytes")
	assert.Contains(t, string(absent.HTML()), "nothing there yet")
}

// TestCardTargetsAreDistinct: effects that differ only in where one name
// resolves render to different visible text and different card hashes,
// including targets that differ only by Unicode normalization or width,
// which the card flags rather than folds.
func TestCardTargetsAreDistinct(t *testing.T) {
	targets := []string{"", "/srv/files/résumé.txt", "/srv/files/re\u0301sume\u0301.txt",
		"/srv/files/ｒésumé.txt", "/srv/files/Résumé.txt", "/home/dana/résumé.txt"}
	texts, hashes := map[string]string{}, map[string]string{}
	for _, target := range targets {
		c := mustRender(t, writeFileEffect("résumé.txt", target, 4), writeFileContext())
		visible := c.Text()
		if prev, dup := texts[visible]; dup {
			t.Errorf("targets %q and %q render the same text", prev, target)
		}
		texts[visible] = target
		h := c.Hash().String()
		if prev, dup := hashes[h]; dup {
			t.Errorf("targets %q and %q have one card hash", prev, target)
		}
		hashes[h] = target
	}
	nfd := mustRender(t, writeFileEffect("x", "/srv/files/re\u0301sume\u0301.txt", 4), writeFileContext())
	assert.True(t, strings.Contains(nfd.Text(), "the target"), "a target in decomposed form is flagged:\n%s", nfd.Text())
}
