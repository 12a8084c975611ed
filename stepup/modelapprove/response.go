package modelapprove

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// parseAnswer reads the model's answer, which must be exactly one JSON
// object with two string members, "decision" ("approve" or "deny") and
// "reason", each once and spelled exactly so, with nothing but
// whitespace around it. encoding/json alone would let a duplicate member
// win, match member names regardless of case and ignore unknown ones;
// each of those is a way to slip an approval past a reader of the
// answer, so the object is read token by token instead.
func parseAnswer(raw string) (approve bool, reason string, err error) {
	if strings.TrimSpace(raw) == "" {
		return false, "", errors.New("empty answer")
	}
	if !utf8.ValidString(raw) {
		return false, "", errors.New("answer is not UTF-8")
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false, "", errors.New("answer is not a JSON object")
	}
	var decision *string
	var why *string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false, "", errors.New("answer is not valid JSON")
		}
		key, _ := tok.(string)
		var dst **string
		switch key {
		case "decision":
			dst = &decision
		case "reason":
			dst = &why
		default:
			return false, "", errors.New("answer has a member other than decision and reason")
		}
		if *dst != nil {
			return false, "", errors.New("answer repeats a member")
		}
		tok, err = dec.Token()
		if err != nil {
			return false, "", errors.New("answer is not valid JSON")
		}
		s, ok := tok.(string)
		if !ok {
			return false, "", errors.New("answer member is not a string")
		}
		*dst = &s
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return false, "", errors.New("answer is not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return false, "", errors.New("answer has data after the object")
	}
	if decision == nil || why == nil {
		return false, "", errors.New("answer lacks decision or reason")
	}
	switch *decision {
	case "approve":
		approve = true
	case "deny":
	default:
		return false, "", errors.New(`decision is neither "approve" nor "deny"`)
	}
	return approve, cleanReason(*why), nil
}

// cleanReason keeps the model's reason on one line of visible text: it is
// written to audit records and shown to people.
func cleanReason(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || invisible(r) {
			return ' '
		}
		return r
	}, s)
}
