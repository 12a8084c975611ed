package main

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/agentstepup/asu/receipt"
)

// receiptReport is the --json output of `verify receipt`.
type receiptReport struct {
	File    string          `json:"file"`
	Valid   bool            `json:"valid"`
	Reason  string          `json:"reason,omitempty"`
	Expired *bool           `json:"expired,omitempty"`
	Result  *receipt.Result `json:"result,omitempty"`
}

func runReceipt(args []string, stdout io.Writer, now func() time.Time) (int, error) {
	fs := flag.NewFlagSet("receipt", flag.ContinueOnError)
	keyFile := fs.String("key", "", "approver's public key: base64url COSE_Key or PEM")
	rpID := fs.String("rp-id", "", "WebAuthn relying party ID")
	var origins list
	fs.Var(&origins, "origin", "allowed origin of the approval page (repeatable)")
	user := fs.String("user", "", "require this approver user name")
	credID := fs.String("credential-id", "", "require this credential ID (base64url)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	file, err := parse(fs, args)
	if err != nil {
		return 0, err
	}
	if *keyFile == "" || *rpID == "" || len(origins) == 0 {
		return 0, fmt.Errorf("%w: --key, --rp-id and --origin are required", errUsage)
	}
	keyText, err := readFile(*keyFile, "key file", maxKeyFile)
	if err != nil {
		return 0, err
	}
	key, err := parseKey(keyText)
	if err != nil {
		return 0, err
	}
	if *user != "" || *credID != "" {
		id := receipt.Identity{User: *user}
		if *credID != "" {
			if id.CredentialID, err = base64.RawURLEncoding.DecodeString(*credID); err != nil {
				return 0, fmt.Errorf("%w: --credential-id is not base64url", errUsage)
			}
		}
		key = key.WithIdentity(id)
	}
	doc, err := readFile(file, "receipt", maxReceiptFile)
	if err != nil {
		return 0, err
	}

	rep := receiptReport{File: file}
	r, err := receipt.Parse(doc)
	if err == nil {
		rep.Result, err = receipt.Verify(r, key, receipt.Policy{RPID: *rpID, Origins: origins})
	}
	if err != nil {
		rep.Reason = err.Error()
	} else {
		rep.Valid = true
		expired := rep.Result.Expired(now())
		rep.Expired = &expired
	}

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return 0, err
		}
	} else {
		fmt.Fprintln(stdout, receiptLine(rep))
	}
	if !rep.Valid {
		return exitInvalid, nil
	}
	return exitValid, nil
}

// receiptLine is the one-line text verdict. The tool and the approver are
// quoted: the approver's name is not signed, and the tool is the agent's
// to choose.
func receiptLine(rep receiptReport) string {
	if !rep.Valid {
		return "invalid: " + printable(rep.Reason)
	}
	res := rep.Result
	window := "open until"
	if *rep.Expired {
		window = "closed at"
	}
	return fmt.Sprintf("valid: %s approved by %s with %s; digest %s; approval window %s %s",
		quoted(res.Effect.Tool), quoted(res.Approver), res.Algorithm, res.Digest, window, res.ExpiresAt.Format(time.RFC3339))
}
