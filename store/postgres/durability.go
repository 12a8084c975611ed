package postgres

import (
	"context"
	"log/slog"
)

// Durability is what the database promises about a commit it
// acknowledged, read at [Open] from the store's own connection settings.
// Exactly once rests on it: a consumed approval the database forgets
// (a crash with synchronous_commit off, a failover to a standby that had
// not received the commit, a point-in-time restore to before it) is
// approved again in the store that is left, and the store has gone
// backwards. See the package documentation, "Durability and failover".
type Durability struct {
	// SynchronousCommit is synchronous_commit: "on", "remote_apply",
	// "remote_write", "local" or "off".
	SynchronousCommit string `json:"synchronous_commit"`
	// SynchronousStandbys is synchronous_standby_names: the standbys a
	// commit waits for; empty means none.
	SynchronousStandbys string `json:"synchronous_standby_names"`
}

// Off reports whether commits return before they reach the disk
// (synchronous_commit off): a crash of the server loses the last ones.
func (d Durability) Off() bool { return d.SynchronousCommit == "off" }

// WaitsForStandby reports whether a commit returns only once a
// synchronous standby has it (synchronous_standby_names set and
// synchronous_commit on, remote_write or remote_apply), so a failover to
// that standby loses no commit the store acknowledged.
func (d Durability) WaitsForStandby() bool {
	switch d.SynchronousCommit {
	case "on", "remote_write", "remote_apply":
		return d.SynchronousStandbys != ""
	}
	return false
}

// Risk says in one sentence what these settings risk for exactly once.
func (d Durability) Risk() string {
	switch {
	case d.Off():
		return "synchronous_commit is off: a server crash loses the last commits, consumed approvals included, and they could run again"
	case d.WaitsForStandby() && d.SynchronousCommit == "remote_write":
		return "commits wait for a synchronous standby's memory: a failover loses nothing unless the primary and that standby's host fail together"
	case d.WaitsForStandby():
		return "commits wait for a synchronous standby: a failover to it loses no acknowledged commit"
	case d.SynchronousCommit == "local" || d.SynchronousStandbys == "":
		return "commits wait for the primary's disk only: a failover to an asynchronous standby, or a point-in-time restore, loses the last commits"
	}
	return "commits wait for the primary's disk"
}

// Durability returns the database's durability settings as read at
// [Open].
func (s *Store) Durability() Durability { return s.durability }

// readDurability reads the settings and warns through log when commits
// may be lost on a crash.
func (s *Store) readDurability(ctx context.Context, log *slog.Logger) error {
	var d Durability
	err := s.pool.QueryRow(ctx, `SELECT current_setting('synchronous_commit'), current_setting('synchronous_standby_names')`).
		Scan(&d.SynchronousCommit, &d.SynchronousStandbys)
	if err != nil {
		return s.fail(ctx, "read durability", err)
	}
	s.durability = d
	if log != nil && d.Off() {
		log.LogAttrs(ctx, slog.LevelWarn, "store: PostgreSQL commits are not durable",
			slog.String("synchronous_commit", d.SynchronousCommit), slog.String("risk", d.Risk()))
	}
	return nil
}
