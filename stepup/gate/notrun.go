package gate

import "time"

// NotRunWindow is how long identical refusals of one ticket's Execute
// (the same state, the same reason) are counted rather than written: the
// first is a [receipt.DecisionNotRun] row, the next written after the
// window says how many it stands for. So an agent executing a spent
// ticket in a loop grows the audit chain by one row per ticket, kind of
// refusal and window on each gate, not one per call. A store failure or
// a cancelled call is not a refusal and writes no row.
const NotRunWindow = time.Hour
