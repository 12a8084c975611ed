package sqlite

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/store"
)

// tables are the tables check reads.
var tables = []string{"approvals", "credentials", "invites", "counters", "streaks", "audit", "grants", "schema_version"}

// check is what Open runs: PRAGMA quick_check, the first row of every
// table, and the whole audit chain. It fails with ErrCorrupt, naming the
// first damage, when any of them finds some.
func (s *Store) check(ctx context.Context) error {
	problems, err := s.pragmaCheck(ctx, "quick_check", 1)
	if err != nil {
		return fmt.Errorf("%w: quick_check: %v", ErrCorrupt, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: quick_check: %s", ErrCorrupt, problems[0].What)
	}
	for _, table := range tables {
		rows, err := s.db.QueryContext(ctx, `SELECT * FROM `+table+` LIMIT 1`)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			_ = rows.Close()
		}
		if err != nil {
			return fmt.Errorf("%w: table %s: %v", ErrCorrupt, table, err)
		}
	}
	var r store.Report
	if err := s.checkChain(ctx, &r); err != nil {
		return fmt.Errorf("sqlite: open: %w", err)
	}
	if r.Damaged() {
		p := r.Problems[0]
		return fmt.Errorf("%w: audit seq %d-%d: %s (run the integrity check for the whole report)",
			ErrCorrupt, p.FromSeq, p.ToSeq, p.What)
	}
	return nil
}

// Check implements [store.Checker]: PRAGMA integrity_check over every page
// and index, the audit chain from its first record to its head (each
// record's hash, its link to the one before, missing and unreadable
// rows), and every ticket row (it parses, its effect hashes to its
// digest). It reads the whole file. A damaged store refuses to decide
// from then on.
func (s *Store) Check(ctx context.Context) (store.Report, error) {
	if err := s.enterRead(ctx, "check"); err != nil {
		return store.Report{}, err
	}
	r := store.Report{Backend: "SQLite " + s.path}
	problems, err := s.pragmaCheck(ctx, "integrity_check", store.MaxProblems)
	if err != nil {
		if ctx.Err() != nil {
			return store.Report{}, fmt.Errorf("sqlite: check: %w", ctx.Err())
		}
		r.Add(store.Problem{Table: "file", What: "integrity_check cannot run: " + err.Error()})
	}
	for _, p := range problems {
		r.Add(p)
	}
	if err := s.checkChain(ctx, &r); err != nil {
		return store.Report{}, fmt.Errorf("sqlite: check: %w", err)
	}
	if err := s.checkTickets(ctx, &r); err != nil {
		return store.Report{}, fmt.Errorf("sqlite: check: %w", err)
	}
	if r.Damaged() {
		_ = s.damage.Note(fmt.Errorf("%w: the integrity check found %d problems", store.ErrCorrupt, len(r.Problems)))
	}
	return r, nil
}

// treeRef is how integrity_check names a b-tree: by its root page.
var treeRef = regexp.MustCompile(`Tree (\d+) page (\d+)`)

// pragmaCheck runs PRAGMA quick_check or integrity_check and returns the
// lines that are not "ok", at most limit of them, with each b-tree named
// by its table or index as well as its root page.
func (s *Store) pragmaCheck(ctx context.Context, pragma string, limit int) ([]store.Problem, error) {
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf(`PRAGMA %s(%d)`, pragma, limit))
	if err != nil {
		return nil, err
	}
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			_ = rows.Close()
			return nil, err
		}
		if line != "ok" {
			lines = append(lines, line)
		}
	}
	err = rows.Err()
	_ = rows.Close()
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, nil
	}
	roots := s.roots(ctx)
	out := make([]store.Problem, 0, len(lines))
	for _, line := range lines {
		line = treeRef.ReplaceAllStringFunc(line, func(m string) string {
			sub := treeRef.FindStringSubmatch(m)
			if name, ok := roots[sub[1]]; ok {
				return fmt.Sprintf("Tree %s (%s) page %s", sub[1], name, sub[2])
			}
			return m
		})
		out = append(out, store.Problem{Table: "file", What: strings.TrimSpace(line)})
	}
	return out, nil
}

// roots maps the root page of every table and index to its name, as far
// as the schema can still be read.
func (s *Store) roots(ctx context.Context) map[string]string {
	out := map[string]string{}
	rows, err := s.db.QueryContext(ctx, `SELECT rootpage, type, name FROM sqlite_schema WHERE rootpage > 0`)
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var (
			root       int64
			kind, name string
		)
		if rows.Scan(&root, &kind, &name) == nil {
			out[strconv.FormatInt(root, 10)] = kind + " " + name
		}
	}
	return out
}

// checkChain reads the audit table in seq order and verifies every
// record, adding what it finds to r. Only a check that cannot run (ctx
// ended, the store closed) is an error; a table that stops being readable
// part way is damage.
func (s *Store) checkChain(ctx context.Context, r *store.Report) error {
	c := store.NewChainCheck(r)
	rows, err := s.db.QueryContext(ctx, `SELECT `+auditRowCols+` FROM audit ORDER BY seq`)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		r.Add(store.Problem{Table: "audit", What: "the table cannot be read: " + err.Error()})
		return nil
	}
	defer rows.Close()
	for rows.Next() {
		var w auditRow
		if err := w.scan(rows); err != nil {
			// database/sql's conversion errors quote the value: say only what.
			r.Add(store.Problem{Table: "audit", FromSeq: r.HeadSeq + 1, ToSeq: r.HeadSeq + 1,
				What: "the row after this seq holds a column of the wrong type"})
			return nil
		}
		rec, err := w.decode()
		if err != nil {
			c.Unreadable(w.seq, strings.TrimPrefix(err.Error(), fmt.Sprintf("%v: audit row %d: ", store.ErrCorrupt, w.seq)))
			continue
		}
		c.Record(rec)
	}
	if err := rows.Err(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		r.Add(store.Problem{Table: "audit", FromSeq: r.HeadSeq + 1, ToSeq: r.HeadSeq + 1,
			What: "the rows from this seq on cannot be read: " + err.Error()})
	}
	return nil
}

// checkTickets reads every ticket row, adding to r those that do not
// parse or whose effect does not hash to their digest.
func (s *Store) checkTickets(ctx context.Context, r *store.Report) error {
	rows, err := s.db.QueryContext(ctx, `SELECT `+approvalCols+` FROM approvals ORDER BY rowid`)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		r.Add(store.Problem{Table: "approvals", What: "the table cannot be read: " + err.Error()})
		return nil
	}
	defer rows.Close()
	for rows.Next() {
		r.Tickets++
		a, err := scanApproval(rows)
		switch {
		case err != nil:
			r.Add(store.Problem{Table: "approvals", Key: a.ID, What: ticketWhy(err)})
		case !validState(a.State):
			r.Add(store.Problem{Table: "approvals", Key: a.ID, What: "its state is not one a ticket takes"})
		case !canon.Sum(a.Effect).Equal(a.Digest):
			r.Add(store.Problem{Table: "approvals", Key: a.ID, What: "its effect does not match its digest"})
		}
	}
	if err := rows.Err(); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		r.Add(store.Problem{Table: "approvals", What: "rows cannot be read: " + err.Error()})
	}
	return nil
}

// ticketWhy is what a ticket row's scan error says, without the row:
// the reason store.CorruptRow gave, or, for database/sql's conversion
// errors, which quote the value, only what is wrong.
func ticketWhy(err error) string {
	if msg := err.Error(); errors.Is(err, store.ErrCorrupt) {
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			return msg[i+2:]
		}
	}
	return "a column holds a value of the wrong type"
}

// validState reports whether st is a state a stored ticket can be in.
func validState(st store.State) bool {
	switch st {
	case store.Pending, store.Approved, store.Denied, store.Expired, store.Cancelled, store.Revoked,
		store.Executing, store.Done, store.Failed, store.Abandoned:
		return true
	}
	return false
}
