package openaijudge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// answer returns the content of the first choice of the chat completion
// body: a JSON string, in a response in which no member it reads appears
// twice.
func answer(body []byte) (string, error) {
	if !json.Valid(body) {
		return "", errors.New("openaijudge: response unreadable")
	}
	top, err := members(body, "response", "choices")
	if err != nil {
		return "", err
	}
	var choices []json.RawMessage
	if c, ok := top["choices"]; ok && !isNull(c) {
		if json.Unmarshal(c, &choices) != nil {
			return "", errors.New("openaijudge: the response's choices are not a list")
		}
	}
	if len(choices) == 0 {
		return "", errors.New("openaijudge: response has no choices")
	}
	choice, err := members(choices[0], "choice", "message")
	if err != nil {
		return "", err
	}
	msg, err := members(choice["message"], "message", "content", "refusal")
	if err != nil {
		return "", err
	}
	if r, ok := msg["refusal"]; ok && !isNull(r) && !bytes.Equal(r, []byte(`""`)) {
		return "", errors.New("openaijudge: the model refused to answer")
	}
	c, ok := msg["content"]
	if !ok || len(c) == 0 || c[0] != '"' {
		return "", errors.New("openaijudge: the message's content is not a string")
	}
	var content string
	if err := json.Unmarshal(c, &content); err != nil {
		return "", errors.New("openaijudge: the message's content is not a string")
	}
	return content, nil
}

// members returns the members of the JSON object raw (what says which
// part of the response it is) that have the names read, refusing a
// name read that appears twice, in any letter case.
func members(raw json.RawMessage, what string, read ...string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("openaijudge: the %s is not a JSON object", what)
	}
	out := make(map[string]json.RawMessage, len(read))
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok {
			return nil, errors.New("openaijudge: response unreadable")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, errors.New("openaijudge: response unreadable")
		}
		for _, r := range read {
			if !strings.EqualFold(name, r) {
				continue
			}
			if _, dup := out[r]; dup {
				return nil, fmt.Errorf("openaijudge: the %s has more than one %q member", what, r)
			}
			out[r] = nil // seen, in whatever case
			if name == r {
				out[r] = v
			}
		}
	}
	return out, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
