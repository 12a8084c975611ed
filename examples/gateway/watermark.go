package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/agentstepup/asu/stepup/gate"
	"github.com/agentstepup/asu/stepup/plug"
	"github.com/agentstepup/asu/stepup/watermark"
)

// watermarkFile is where the gateway keeps its watermark: -watermark, or,
// for a SQLite file and a key that outlives the process, FILE.mark beside
// it (FILE.NAME.mark for -instance NAME, so that replicas on one file keep
// one each). Without a key the gateway draws one at random, under which
// marks could not be read back, so it keeps none.
func watermarkFile(o options) string {
	switch {
	case o.watermark != "":
		return o.watermark
	case o.keyFile == "" && o.keys == "":
		return ""
	case o.db != "" && o.instance != "":
		return o.db + "." + o.instance + ".mark"
	case o.db != "":
		return o.db + ".mark"
	}
	return ""
}

// watermarkPeers are the watermark files of the other replicas of o's
// store: -watermark-peer, and with -db the marks beside the file (FILE.mark,
// FILE.NAME.mark) that are not this replica's own. A replica reads them
// when it starts, so one that was stopped, or whose own file is new, holds
// for a store restored behind what another replica saw.
func watermarkPeers(o options) []string {
	own := filepath.Clean(o.watermark)
	seen := map[string]bool{own: true}
	var out []string
	add := func(p string) {
		if p = filepath.Clean(p); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range o.markPeers {
		add(p)
	}
	if o.db != "" {
		add(o.db + ".mark")
		names, _ := filepath.Glob(globEscape(o.db) + ".*.mark")
		for _, p := range names {
			add(p)
		}
	}
	return out
}

// globEscape escapes the characters filepath.Match gives a meaning to.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// openWatermark opens the gateway's watermark file, with the other
// replicas' files as its peers, and returns the gate option that keeps
// it. A file another process holds is refused: one gateway a file.
func openWatermark(path string, peers []string) (*watermark.File, gate.Option, error) {
	f, err := watermark.OpenFile(path)
	if errors.Is(err, watermark.ErrLocked) {
		return nil, gate.Option{}, fmt.Errorf("-watermark %s: a running gateway holds it (stop it first; each replica keeps a file of its own: give each -instance NAME or -watermark FILE)", path)
	}
	if err != nil {
		return nil, gate.Option{}, fmt.Errorf("-watermark: %w", err)
	}
	keep := make([]plug.Watermarks, len(peers))
	for i, p := range peers {
		keep[i] = watermark.Peer(p)
	}
	return f, gate.WithWatermark(f, keep...), nil
}

// runWatermark compares the store with the gateway's watermark and says
// what it finds, changing nothing.
//
//	go run ./examples/gateway watermark -db asu.db -key-file gate.key
func runWatermark(ctx context.Context, w io.Writer, args []string) error {
	return watermarkCommand(ctx, w, "watermark", args, false)
}

// runReconcile lifts the hold of a gateway whose store went back behind
// its watermark, after review: every call that may have run before is
// held (cancelled, revoked or abandoned, each with its audit row).
//
//	go run ./examples/gateway reconcile -db asu.db -key-file gate.key -by operator:erin
func runReconcile(ctx context.Context, w io.Writer, args []string) error {
	return watermarkCommand(ctx, w, "reconcile", args, true)
}

func watermarkCommand(ctx context.Context, w io.Writer, name string, args []string, act bool) error {
	a := newAdminFlags(name, w)
	mark := a.fs.String("watermark", "", "the gateway's watermark `file` (default: the -db file's, FILE.mark, or FILE.NAME.mark for -instance NAME)")
	instance := a.fs.String("instance", "", "the replica's -instance `name`, whose watermark to read")
	var peers multiFlag
	a.fs.Var(&peers, "watermark-peer", "another replica's watermark `file` (repeatable; with -db, the marks beside it are read without it)")
	if err := a.parse(args, "(-db FILE | -postgres DSN) (-key-file FILE | -keys FILE) [-watermark FILE] [-watermark-peer FILE]... [-by WHO]"); err != nil {
		return err
	}
	a.watermark = watermarkFile(options{watermark: *mark, db: a.db, keyFile: a.keyFile, keys: a.keys, instance: *instance})
	a.markPeers = peers
	if a.watermark == "" {
		return errors.New("-watermark: name the gateway's watermark file, with the -key-file or -keys the gateway runs with")
	}
	st, b, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	defer b.close(ctx)
	ad := b.gate.Admin()
	rec, err := ad.Watermark(ctx)
	if act && err == nil && rec.Found != "" {
		rec, err = ad.Reconcile(ctx, a.by)
	}
	if err != nil {
		return err
	}
	if rec.Found == "" {
		fmt.Fprintf(w, "the store is not behind its watermark (audit seq %d, head %.12s): nothing to reconcile\n", rec.Store.Seq, rec.Store.Head)
		return nil
	}
	fmt.Fprintf(w, "the store is held: %s (store at seq %d head %.12s; watermark at seq %d head %.12s)\n",
		rec.Found, rec.Store.Seq, rec.Store.Head, rec.Marked.Seq, rec.Marked.Head)
	for _, r := range rec.Lost {
		fmt.Fprintf(w, "ran before, not recorded now: ticket %s, idempotency key %s, at %s (the store shows it %s): its tool may have acted\n",
			r.Ticket, r.Key, r.At.UTC().Format("2006-01-02T15:04:05Z"), r.Shown)
	}
	if !act {
		fmt.Fprintf(w, "%d runs the store no longer records; review them, then: %s reconcile %s\n", len(rec.Lost), "go run ./examples/gateway", strings.Join(args, " "))
		return nil
	}
	for _, h := range rec.Held {
		ran := ""
		if h.Ran {
			ran = ", which had run"
		}
		fmt.Fprintf(w, "held: ticket %s (%s, was %s%s), idempotency key %s\n", h.Ticket, h.Tool, h.Was, ran, h.Key)
	}
	fmt.Fprintf(w, "reconciled by %s: %d tickets held, %d runs the store had lost; the gateway decides again\n", a.by, len(rec.Held), len(rec.Lost))
	return nil
}
