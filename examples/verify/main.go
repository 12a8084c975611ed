// Command verify checks asu evidence with nothing but the approver's public
// key: a receipt of one approval, or an exported audit chain. It also sizes
// the reviewers an approval queue needs, from a model or from an exported
// audit chain.
//
//	verify receipt FILE --key KEYFILE --rp-id ID --origin URL [--origin URL ...]
//	               [--user NAME] [--credential-id B64URL] [--json]
//	verify quorum FILE --key USER=KEYFILE [--key USER=KEYFILE ...] --k N --rp-id ID --origin URL [--origin URL ...] [--json]
//	verify audit FILE [--anchor HEX | --checkpoint FILE --gate-key KEYFILE]
//	             [--head HEX] [--metrics] [--json] [--progress N]
//	verify staffing [--audit FILE] [--tasks N] [--share F] [--per-task F] [--peak F]
//	                [--review DURATION] [--utilization F] [--wait DURATION] [--json]
//
// KEYFILE holds the approver's COSE_Key in base64url (the encoding of a
// receipt's approver.public_key, as the gate enrolled it) or a PEM public
// key. The key inside the receipt is never trusted, only compared. Nothing
// signs the approver's user name or credential ID; --user and
// --credential-id pin them when the enrollment record names them.
//
// quorum checks the receipts of an approval that needed several people
// (receipt.Quorum, from gate.Desk.QuorumReceipt): it is valid when at
// least --k of the approvers given with --key USER=KEYFILE have a receipt,
// all over one approval request, that verifies under one of their own
// keys and names them (a receipt's user name is not signed, so each key
// is pinned to its person; repeat a user for each of their passkeys).
//
// audit reads and verifies the chain as a stream (audit.NewVerifier), in
// memory that does not grow with its length, and on a long chain says how
// far it got on stderr every --progress records (100,000 by default) or 5
// seconds.
//
// An audit chain verifies from the first record of the chain (seq 1). A
// chain that starts later (an export whose first records were archived, or
// deleted) is invalid unless --checkpoint gives a checkpoint the gate
// signed (seq, hash, time) and --gate-key the gate's ed25519 public key
// (PEM): then it verifies when it starts right after the checkpoint, and a
// chain from the start must pass through it. --anchor instead checks the
// first record's link to a hash the auditor kept from an earlier
// verification. --head checks that the last record is the head the store
// reports, which is what exposes records removed from the end.
//
// A line is read only when it is one record whose members, at every
// level, are named exactly as the record's fields: a member in another
// case or with a folded letter ("Decision", "ſeq"), unknown or repeated
// makes the file invalid. An invalid chain's reason names the file and the
// line, from 1, and the record's seq when it was read, e.g. for line 3
// repeated:
//
//	invalid: audit.jsonl: audit: chain broken at line 4 (seq 3): sequence jumps from 3
//
// and --json gives them as file, line and seq. An empty file holds no
// records and is valid, verifying nothing ("valid: no records (the file
// is empty: ...)"); with --checkpoint or --head it is invalid, as a file
// cut before the checkpoint or the head is.
//
// --metrics prints the approval figures of the records that show approval
// fatigue: per effect class and per approver, the approval rate, the
// median and 90th-percentile time to decision, active time and approvals
// per active hour, and a warning for every group that approves more than
// 95% of requests with a median decision under 5 seconds over at least 20
// decisions (figures.DefaultRubberStampRule).
//
// staffing sizes the reviewers behind the approval queue (package
// staffing): approvals per day and in the peak hour, reviewers busy at the
// peak, reviewers on shift at the target utilization, and tickets parked
// by Little's law. The flags default to the worked example (20,000 tasks
// a day, 6% needing approval, 1.2 approvals each, peak at 3 times the
// mean, 60s of review, 70% utilization, a 20-minute wait). --audit reads
// what it can from an exported audit chain (read, not verified): tasks per
// day, the share asking for approval, approvals per such task, the peak
// factor, and the median time to decision as both review time and wait.
// Flags given override the file. Durations are Go durations (90s, 20m).
//
// The exit status is 0 only when the evidence is valid (for staffing: a
// plan was made), 1 when it is not (with a one-line reason), and 2 for a
// usage or file error, or figures out of range. --json prints the full
// result as one JSON object instead.
//
// The text output never prints what it reads from a file raw: a receipt's
// tool and approver are quoted, as Go quotes a string ("valid:
// "send_email" approved by "user:dana" with ES256; ..."), and reasons,
// file names and the class and approver names of --metrics have every
// character that does not print as itself escaped (\x1b, \n, \u202e). A
// receipt's approver name is not signed: printed raw, it could move the
// cursor and write a verdict of its own.
//
// A file read whole is refused unread, as a file error naming it and the
// limit, when it is larger than its limit: a receipt receipt.MaxSize
// bytes, a quorum receipt.MaxQuorumReceipts times that, a key file or a
// checkpoint 64 KiB, an audit chain for staffing --audit 1 GiB. An audit
// chain that verify audit verifies is read as a stream, of any length.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Exit statuses.
const (
	exitValid   = 0
	exitInvalid = 1
	exitUsage   = 2
)

const usage = `usage:
  verify receipt FILE --key KEYFILE --rp-id ID --origin URL [--origin URL ...]
                 [--user NAME] [--credential-id B64URL] [--json]
  verify quorum FILE --key USER=KEYFILE [--key USER=KEYFILE ...] --k N --rp-id ID --origin URL [--origin URL ...] [--json]
  verify audit FILE [--anchor HEX | --checkpoint FILE --gate-key KEYFILE]
               [--head HEX] [--metrics] [--json] [--progress N]
  verify staffing [--audit FILE] [--tasks N] [--share F] [--per-task F] [--peak F]
                  [--review DURATION] [--utilization F] [--wait DURATION] [--json]`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, time.Now))
}

// run is the whole command: it parses args, verifies, prints to stdout (or
// the reason for a usage error to stderr) and returns the exit status. now
// is the clock used to report whether an approval window has closed.
func run(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return exitUsage
	}
	var code int
	var err error
	switch args[0] {
	case "receipt":
		code, err = runReceipt(args[1:], stdout, now)
	case "quorum":
		code, err = runQuorum(args[1:], stdout)
	case "audit":
		code, err = runAudit(args[1:], stdout, stderr, now)
	case "staffing":
		code, err = runStaffing(args[1:], stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return exitValid
	default:
		err = fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, "verify:", printable(err.Error()))
		if errors.Is(err, errUsage) {
			fmt.Fprintln(stderr, usage)
		}
		return exitUsage
	}
	return code
}

var errUsage = errors.New("usage")

// parse parses flags that may come before or after the one positional
// argument (FILE), and returns that argument.
func parse(fs *flag.FlagSet, args []string) (string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", fmt.Errorf("%w: %v", errUsage, err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 1 {
		return "", fmt.Errorf("%w: want exactly one FILE, got %d arguments", errUsage, len(pos))
	}
	return pos[0], nil
}

// list is a repeatable string flag.
type list []string

func (l *list) String() string { return strings.Join(*l, ",") }

func (l *list) Set(s string) error {
	*l = append(*l, s)
	return nil
}
