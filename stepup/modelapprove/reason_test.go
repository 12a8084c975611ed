package modelapprove_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/agentstepup/asu/stepup/modelapprove"
)

// auditMaterial matches what belongs to the record and never to the
// runtime's model: error chains of this package or the model's client,
// hex digests, the raw answer.
var auditMaterial = regexp.MustCompile(`modelapprove:|openaijudge:|[0-9a-f]{16,}|\n|status 5|decision"|sha256`)

// TestForcedDenialReasonIsOneClause: every way the judge denies without
// the model's decision gives a Reason of one plain clause (no error
// chain, no hash, no echo of the model's answer or its client's error),
// while Err keeps the detail for the record.
func TestForcedDenialReasonIsOneClause(t *testing.T) {
	secretAnswer := `{"decision":"approve","reason":"ok"} 0123456789abcdef0123456789abcdef`
	cases := map[string]struct {
		m     modelapprove.Model
		o     *modelapprove.Options
		card  string
		agent string
		err   error
	}{
		"empty card":      {m: says(secretAnswer), card: "", err: modelapprove.ErrInput},
		"long card":       {m: says(secretAnswer), o: &modelapprove.Options{MaxCardBytes: 10}, card: sampleCard, err: modelapprove.ErrInput},
		"long agent text": {m: says(secretAnswer), o: &modelapprove.Options{MaxUntrustedBytes: 3}, card: sampleCard, agent: "abcd", err: modelapprove.ErrInput},
		"malformed":       {m: says(secretAnswer), card: sampleCard, err: modelapprove.ErrMalformed},
		"oversize":        {m: says(secretAnswer), o: &modelapprove.Options{MaxResponseBytes: 8}, card: sampleCard, err: modelapprove.ErrOversize},
		"client error": {m: &fakeModel{answer: func(context.Context, string, string) (string, error) {
			return "", errors.New("openaijudge: status 503 from 10.0.0.7:8080 body deadbeefdeadbeefdeadbeef")
		}}, card: sampleCard, err: modelapprove.ErrModel},
		"panic": {m: &fakeModel{answer: func(context.Context, string, string) (string, error) { panic("boom") }},
			card: sampleCard, err: modelapprove.ErrModel},
		"late": {m: &fakeModel{answer: func(ctx context.Context, _, _ string) (string, error) {
			<-ctx.Done()
			return secretAnswer, nil
		}}, o: &modelapprove.Options{Timeout: time.Millisecond}, card: sampleCard, err: modelapprove.ErrTimeout},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := newJudge(t, tc.m, tc.o).Decide(context.Background(), tc.card, tc.agent)
			assert.False(t, v.Approve)
			assert.ErrorIs(t, v.Err, tc.err)
			assert.NotEmpty(t, v.Reason)
			assert.NotRegexp(t, auditMaterial, v.Reason)
			assert.Equal(t, 1, 1+strings.Count(v.Reason, ". "), "one sentence: %q", v.Reason)
			assert.False(t, strings.HasSuffix(v.Reason, "."), "a clause the gate completes: %q", v.Reason)
			assert.True(t, strings.HasPrefix(v.Reason, "the model"), "%q", v.Reason)
		})
	}
}
