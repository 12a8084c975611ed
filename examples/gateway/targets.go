package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agentstepup/asu/flood"
)

// maxTargetsFile bounds the file introduce reads.
const maxTargetsFile = 4 << 20

// runIntroduce makes recipients known to flood control: the team's
// partners, customers and own other domains, which the first-contact rule
// (one card an hour to a domain nobody was seen sending to, and a day's
// lockout for every user after one denial) should not hold. Each is an
// e-mail address, a host or a URL; its registrable domain is what becomes
// known, as an approval of a request to it would make it. Introducing one
// again is harmless; it also lifts a first-contact lockout of it.
//
//	go run ./examples/gateway introduce -db asu.db -targets partner.example,billing@customer.example
//	go run ./examples/gateway introduce -db asu.db -file known-recipients.txt
func runIntroduce(ctx context.Context, w io.Writer, args []string) error {
	a := newAdminFlags("introduce", w)
	list := a.fs.String("targets", "", "comma-separated e-mail `addresses, hosts or URLs`")
	file := a.fs.String("file", "", "a `file` of them, one per line (# starts a comment)")
	if err := a.parse(args, "(-db FILE | -postgres DSN) (-targets LIST | -file FILE)"); err != nil {
		return err
	}
	type named struct {
		where  string // the flag or file:line it came from
		target flood.Target
	}
	var targets []named
	add := func(where, s string) error {
		t, err := targetOf(s)
		if err != nil {
			return fmt.Errorf("%s: %q: %w", where, s, err)
		}
		targets = append(targets, named{where, t})
		return nil
	}
	for s := range strings.SplitSeq(*list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if err := add("-targets", s); err != nil {
				return err
			}
		}
	}
	if *file != "" {
		lines, err := readTargetsFile(*file)
		if err != nil {
			return err
		}
		for i, s := range lines {
			if s != "" {
				if err := add(fmt.Sprintf("%s:%d", *file, i+1), s); err != nil {
					return err
				}
			}
		}
	}
	if len(targets) == 0 {
		return errors.New("-targets or -file: name at least one recipient")
	}
	st, _, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	lim, err := flood.New(st, flood.Limits{}, time.Now)
	if err != nil {
		return err
	}
	seen := map[flood.Target]bool{}
	for _, t := range targets {
		if seen[t.target] {
			continue
		}
		seen[t.target] = true
		if err := lim.Introduce(ctx, t.target); err != nil {
			return fmt.Errorf("%s: %w (%d introduced before it)", t.where, err, len(seen)-1)
		}
		fmt.Fprintf(w, "known: %s\n", strings.TrimPrefix(t.target.String(), "domain:"))
	}
	fmt.Fprintf(w, "introduced %d recipients: requests to them meet the target limits, not the first-contact rule\n", len(seen))
	return nil
}

// targetOf reads an e-mail address, a host or a URL as flood control's
// target, the way the gate names a recipient's.
func targetOf(s string) (flood.Target, error) {
	if strings.Contains(s, "@") && !strings.Contains(s, "://") {
		return flood.EmailTarget(s)
	}
	return flood.DomainTarget(s)
}

// readTargetsFile returns the lines of a targets file, trimmed, with
// comments removed (their place kept, so that errors name the line).
func readTargetsFile(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("-file: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxTargetsFile {
		return nil, fmt.Errorf("-file %s: larger than %d bytes", name, maxTargetsFile)
	}
	var out []string
	sc := bufio.NewScanner(io.LimitReader(f, maxTargetsFile))
	sc.Buffer(make([]byte, 0, 4096), flood.MaxTargetLen+1)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		out = append(out, strings.TrimSpace(line))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("-file %s:%d: %w", name, len(out)+1, err)
	}
	return out, nil
}
