package plug

import "context"

// Watermarks keeps a gate's high-water marks where a rollback of its store
// cannot reach: a file beside the service (package watermark), another
// database, a log service. The gate writes an entry (a line of at most
// [MaxWatermarkEntry] bytes, with no newline, authenticated by the gate's
// key) before every run of an executor and now and then between runs, and
// reads them all back when it starts; a store found behind them is
// refused until an operator reconciles.
//
// Each gate process keeps its own marks: two processes must not share one
// keeper. Implementations must make Append and Replace durable before
// they return; Replace swaps the whole content atomically.
type Watermarks interface {
	// Load returns every entry, oldest first, or none for a new keeper.
	Load(ctx context.Context) ([][]byte, error)
	// Append adds entry after the others.
	Append(ctx context.Context, entry []byte) error
	// Replace makes entries the whole content.
	Replace(ctx context.Context, entries [][]byte) error
}

// MaxWatermarkEntry bounds one entry of [Watermarks].
const MaxWatermarkEntry = 4 << 10
