package audit

import (
	"encoding/json"
	"errors"
)

// ErrMalformed is wrapped by every refusal of [ReadChain] and [Verifier]
// to read an export: a line that is not one JSON object of [Record]
// fields, an empty line, or a line over [MaxLine].
var ErrMalformed = errors.New("audit: malformed export")

// decodeProblem names the field a decode error is about without quoting
// the input.
func decodeProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return "wrong type for field " + te.Field
	}
	return "not an audit record"
}
