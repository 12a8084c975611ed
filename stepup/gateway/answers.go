package gateway

import (
	"bytes"
	"sync"
)

// typeJSON is the Content-Type of every JSON answer. net/http only reads
// a response's header values, so one slice serves every answer.
var typeJSON = []string{"application/json"}

// answerPool keeps the buffers JSON answers are encoded into, so that an
// answer costs no buffer of its own; one that grew past maxPooledAnswer
// (a large result) is left to the collector rather than kept.
type answerPool struct{ p sync.Pool }

const maxPooledAnswer = 64 << 10

var answers answerPool

func (a *answerPool) get() *bytes.Buffer {
	if b, ok := a.p.Get().(*bytes.Buffer); ok {
		b.Reset()
		return b
	}
	return new(bytes.Buffer)
}

func (a *answerPool) put(b *bytes.Buffer) {
	if b.Cap() <= maxPooledAnswer {
		a.p.Put(b)
	}
}
