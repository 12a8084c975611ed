package audit

import (
	"encoding/json"
	"errors"
)

// ErrMalformed is wrapped by every refusal of [ReadChain] and [Verifier]
// to read an export: a line that is not one JSON object of [Record]
// fields (each member, at every level, named exactly as its field: no
// other case, no folded letter, no unknown or repeated member), an empty
// line, or a line over [MaxLine]. Its message names the line, from 1.
var ErrMalformed = errors.New("audit: malformed export")

// decodeProblem names the field a decode error is about without quoting
// the input; what names the value expected, for any other error.
func decodeProblem(err error, what string) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return "wrong type for field " + te.Field
	}
	return "not " + what
}
