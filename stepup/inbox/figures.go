package inbox

import (
	"context"
	"net/http"
	"time"

	"github.com/agentstepup/asu/audit/figures"
)

// figureTimeout bounds the read of the figures: a slow audit chain never
// holds up the queue.
const figureTimeout = 2 * time.Second

// ownFigures is what the header shows an approver about themselves.
type ownFigures struct {
	Approved       int     `json:"approved"`
	Denied         int     `json:"denied"`
	ApprovalRate   float64 `json:"approval_rate"`
	MedianDecision int64   `json:"median_decision_ms"`
	P90Decision    int64   `json:"p90_decision_ms"`
	RubberStamp    bool    `json:"rubber_stamp"`
}

// figuresReply is Prefix/figures: the approver's own row, and the figures
// of everyone by class and overall; no other approver's row.
type figuresReply struct {
	Approver ownFigures               `json:"approver"`
	Overall  figures.Class            `json:"overall"`
	ByClass  map[string]figures.Class `json:"by_class"`
}

func ownRow(m figures.Report, user string) ownFigures {
	c := m.ByApprover[user]
	own := ownFigures{Approved: c.Approvals, Denied: c.Denials, RubberStamp: c.RubberStamp}
	// Without a decision the page shows no figures (approved + denied is 0).
	if c.ApprovalRate != nil && c.Time != nil {
		own.ApprovalRate = *c.ApprovalRate
		own.MedianDecision, own.P90Decision = c.Time.Median().Milliseconds(), c.Time.P90Millis
	}
	return own
}

// metrics reads the figures, or reports that there are none.
func (in *Inbox) metrics(ctx context.Context) (figures.Report, bool) {
	if in.figures == nil {
		return figures.Report{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, figureTimeout)
	defer cancel()
	m, err := in.figures(ctx)
	if err != nil {
		in.log.Info("figures unavailable")
		return figures.Report{}, false
	}
	return m, true
}

func (in *Inbox) figuresJSON(w http.ResponseWriter, r *http.Request) {
	s, err := in.current(r)
	if err != nil {
		in.refuse(w, r, err)
		return
	}
	m, ok := in.metrics(r.Context())
	if !ok {
		in.refuse(w, r, errNotFound)
		return
	}
	writeJSON(w, http.StatusOK, figuresReply{Approver: ownRow(m, s.user), Overall: m.Overall, ByClass: m.ByClass})
}
