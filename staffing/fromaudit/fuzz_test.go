package fromaudit_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/agentstepup/asu/audit"
	"github.com/agentstepup/asu/staffing"
	"github.com/agentstepup/asu/staffing/fromaudit"
)

// FuzzObserve: any exported audit chain either fails to read, or is
// observed, applied and sized without a panic, to a plan with finite
// figures or an ErrInvalidLoad.
func FuzzObserve(f *testing.F) {
	var buf bytes.Buffer
	if err := audit.WriteChain(&buf, workedExampleDay()[19_990:]); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"seq":1,"time":-9223372036854775808,"decision":"needs_approval"}` + "\n" +
		`{"seq":2,"time":9223372036854775807,"decision":"approved","decision_millis":9223372036854775807}` + "\n"))
	f.Add([]byte(`{"task":"a","decision":"denied","decision_millis":-5}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		records, err := audit.ReadChain(bytes.NewReader(data))
		if err != nil {
			return
		}
		o, err := fromaudit.Observe(records)
		if err != nil {
			if len(records) > 0 {
				t.Fatalf("Observe refused %d records: %v", len(records), err)
			}
			return
		}
		if o.Days <= 0 || math.IsInf(o.Days, 0) || o.Tasks < 1 || o.ApprovalShare < 0 || o.ApprovalShare > 1 {
			t.Fatalf("observed %+v", o)
		}
		l, _ := o.Apply(staffing.WorkedExample())
		if p, err := staffing.Size(l); err == nil {
			for _, v := range []float64{p.ApprovalsPerDay, p.ApprovalsPerPeakHour, p.BusyAtPeak, p.OnShiftExact, p.ParkedAtPeak} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("figure %v in %+v", v, p)
				}
			}
		}
	})
}
