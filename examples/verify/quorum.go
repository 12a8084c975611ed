package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/agentstepup/asu/receipt"
)

// quorumReport is the --json output of `verify quorum`.
type quorumReport struct {
	File    string            `json:"file"`
	Valid   bool              `json:"valid"`
	Needed  int               `json:"needed"`
	Reason  string            `json:"reason,omitempty"`
	Results []*receipt.Result `json:"results,omitempty"`
}

// runQuorum verifies a receipt.Quorum: at least --k of the people given
// have a receipt, all over one approval request, that verifies under one
// of their own keys and names them.
func runQuorum(args []string, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("quorum", flag.ContinueOnError)
	var keyFiles, origins list
	fs.Var(&keyFiles, "key", "`USER=KEYFILE`: an approver's user name and the file of one of their keys, base64url COSE_Key or PEM (repeatable; repeat a user for each of their passkeys)")
	k := fs.Int("k", 2, "how many distinct approvers must have approved")
	rpID := fs.String("rp-id", "", "WebAuthn relying party ID")
	fs.Var(&origins, "origin", "allowed origin of the approval page (repeatable)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	file, err := parse(fs, args)
	if err != nil {
		return 0, err
	}
	if len(keyFiles) == 0 || *rpID == "" || len(origins) == 0 || *k < 1 || *k > receipt.MaxQuorumReceipts {
		return 0, fmt.Errorf("%w: --key USER=KEYFILE (per approver), --rp-id, --origin and --k from 1 to %d are required",
			errUsage, receipt.MaxQuorumReceipts)
	}
	var people []receipt.Person
	index := map[string]int{}
	for _, kv := range keyFiles {
		user, f, ok := strings.Cut(kv, "=")
		if !ok || user == "" || f == "" {
			return 0, fmt.Errorf("%w: --key takes USER=KEYFILE, got %q", errUsage, kv)
		}
		text, err := readFile(f, "key file", maxKeyFile)
		if err != nil {
			return 0, err
		}
		key, err := parseKey(text)
		if err != nil {
			return 0, err
		}
		i, seen := index[user]
		if !seen {
			i = len(people)
			index[user] = i
			people = append(people, receipt.Person{User: user})
		}
		people[i].Keys = append(people[i].Keys, key)
	}
	doc, err := readFile(file, "quorum", maxQuorumFile)
	if err != nil {
		return 0, err
	}
	rep := quorumReport{File: file, Needed: *k}
	q, err := receipt.ParseQuorum(doc)
	if err == nil {
		rep.Results, err = receipt.VerifyQuorum(q, people, *k, receipt.Policy{RPID: *rpID, Origins: origins})
	}
	if err != nil {
		rep.Reason = err.Error()
	} else {
		rep.Valid = true
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return 0, err
		}
	} else if rep.Valid {
		fmt.Fprintf(stdout, "valid: %d or more distinct approvers of the given keys approved digest %s\n",
			*k, q.Receipts[0].Digest)
	} else {
		fmt.Fprintln(stdout, "invalid: "+printable(rep.Reason))
	}
	if !rep.Valid {
		return exitInvalid, nil
	}
	return exitValid, nil
}
