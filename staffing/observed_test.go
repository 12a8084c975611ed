package staffing_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/staffing"
)

func TestApply(t *testing.T) {
	base := staffing.WorkedExample()
	tests := []struct {
		name string
		o    staffing.Observed
		set  []string
		want staffing.Load
	}{
		{"nothing observed", staffing.Observed{}, []string{}, base},
		{"tasks only", staffing.Observed{Records: 2, Tasks: 2, TasksPerDay: 5, ApprovalShare: 0},
			[]string{staffing.FieldTasksPerDay, staffing.FieldApprovalShare},
			staffing.Load{TasksPerDay: 5, ApprovalShare: 0, ApprovalsPerTask: 1.2, PeakFactor: 3, ReviewTime: time.Minute,
				Utilization: 0.7, MedianWait: 20 * time.Minute}},
		{"requests", staffing.Observed{Tasks: 4, Requests: 3, TasksPerDay: 8, ApprovalShare: 0.5, ApprovalsPerTask: 1.5, PeakFactor: 2},
			[]string{staffing.FieldTasksPerDay, staffing.FieldApprovalShare, staffing.FieldApprovalsPerTask, staffing.FieldPeakFactor},
			staffing.Load{TasksPerDay: 8, ApprovalShare: 0.5, ApprovalsPerTask: 1.5, PeakFactor: 2, ReviewTime: time.Minute,
				Utilization: 0.7, MedianWait: 20 * time.Minute}},
		{"decisions", staffing.Observed{Tasks: 4, Requests: 3, Decisions: 3, TasksPerDay: 8, ApprovalShare: 0.5,
			ApprovalsPerTask: 1.5, PeakFactor: 2, MedianDecision: 40 * time.Second},
			[]string{staffing.FieldTasksPerDay, staffing.FieldApprovalShare, staffing.FieldApprovalsPerTask, staffing.FieldPeakFactor,
				staffing.FieldReviewTime, staffing.FieldMedianWait},
			staffing.Load{TasksPerDay: 8, ApprovalShare: 0.5, ApprovalsPerTask: 1.5, PeakFactor: 2, ReviewTime: 40 * time.Second,
				Utilization: 0.7, MedianWait: 40 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, set := tt.o.Apply(base)
			assert.Equal(t, tt.want, l)
			assert.Equal(t, tt.set, set)
		})
	}
}

// TestStandardLibraryOnly: sizing a queue links nothing but the standard
// library; reading audit records is package fromaudit's business.
func TestStandardLibraryOnly(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, []string{"github.com/agentstepup/asu/staffing"}, strings.Fields(string(out)))
}
