package tooluse

import "context"

type scopeKey struct{}

type idempotencyKey struct{}

// WithScope returns ctx carrying s, for tools that a framework calls with
// a context and the model's arguments only (Eino, LangChainGo): the host
// sets the scope of the agent run it starts, and the wrapped tools read
// it with [ScopeFrom].
func WithScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(orBackground(ctx), scopeKey{}, s)
}

// ScopeFrom returns the scope ctx carries. A wrapped tool refuses a call
// whose context carries none.
func ScopeFrom(ctx context.Context) (Scope, bool) {
	if ctx == nil {
		return Scope{}, false
	}
	s, ok := ctx.Value(scopeKey{}).(Scope)
	return s, ok
}

// WithIdempotencyKey returns ctx carrying the key the gate runs a call
// with: the executors of the framework adapters hand it to the tool this
// way, since framework tools take no key.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(orBackground(ctx), idempotencyKey{}, key)
}

// IdempotencyKey returns the key a gated run of a tool carries: a tool
// with side effects uses it to act at most once when a run is recovered.
func IdempotencyKey(ctx context.Context) (string, bool) {
	if ctx == nil {
		return "", false
	}
	k, ok := ctx.Value(idempotencyKey{}).(string)
	return k, ok && k != ""
}
