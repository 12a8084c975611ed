package flood_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/flood"
	"github.com/agentstepup/asu/store"
	"github.com/agentstepup/asu/store/memory"
)

func TestLimitsValidate(t *testing.T) {
	tests := []struct {
		name string
		l    flood.Limits
		ok   bool
	}{
		{"zero is the defaults", flood.Limits{}, true},
		{"everything off", off, true},
		{"rates off", flood.Limits{Session: flood.Rate{N: -1}, Agent: flood.Rate{N: -1}, User: flood.Rate{N: -1}, ApproverInflow: flood.Rate{N: -1}}, true},
		{"lockouts off", flood.Limits{SessionLockout: flood.Lockout{After: -1}, AgentLockout: flood.Lockout{After: -1}, UserLockout: flood.Lockout{After: -1}}, true},
		{"custom", flood.Limits{Session: flood.Rate{N: 3, Per: time.Second}, UserLockout: flood.Lockout{After: 2, For: time.Minute}}, true},
		{"lockout count with default duration", flood.Limits{SessionLockout: flood.Lockout{After: 2}}, true},
		{"count without window", flood.Limits{Session: flood.Rate{N: 3}}, false},
		{"window without count", flood.Limits{User: flood.Rate{Per: time.Minute}}, false},
		{"agent window without count", flood.Limits{Agent: flood.Rate{Per: time.Minute}}, false},
		{"approver inflow without window", flood.Limits{ApproverInflow: flood.Rate{N: 30}}, false},
		{"approver inflow window too short", flood.Limits{ApproverInflow: flood.Rate{N: 30, Per: time.Microsecond}}, false},
		{"agent lockout duration without count", flood.Limits{AgentLockout: flood.Lockout{For: time.Minute}}, false},
		{"agent lockout duration too short", flood.Limits{AgentLockout: flood.Lockout{After: 2, For: time.Microsecond}}, false},
		{"negative window", flood.Limits{User: flood.Rate{N: 1, Per: -time.Minute}}, false},
		{"window under a millisecond", flood.Limits{Session: flood.Rate{N: 1, Per: time.Microsecond}}, false},
		{"window not whole microseconds", flood.Limits{Session: flood.Rate{N: 1, Per: time.Second + 1}}, false},
		{"lockout duration without count", flood.Limits{SessionLockout: flood.Lockout{For: time.Minute}}, false},
		{"lockout duration too short", flood.Limits{UserLockout: flood.Lockout{After: 1, For: time.Nanosecond}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.Validate()
			_, newErr := flood.New(memory.New(nil), tt.l, time.Now)
			if tt.ok {
				assert.NoError(t, err)
				assert.NoError(t, newErr)
			} else {
				assert.ErrorIs(t, err, flood.ErrInvalidLimits)
				assert.ErrorIs(t, newErr, flood.ErrInvalidLimits)
			}
		})
	}
}

func TestNewRefusesMissingParts(t *testing.T) {
	_, err := flood.New(nil, flood.Limits{}, time.Now)
	assert.Error(t, err)
	_, err = flood.New(memory.New(nil), flood.Limits{}, nil)
	assert.Error(t, err)
}

func TestDefaultsAndCaps(t *testing.T) {
	tests := []struct {
		name string
		in   flood.Limits
		want flood.Limits
		caps store.Caps
	}{
		{
			name: "zero",
			want: flood.Limits{
				Session: flood.DefaultSessionRate, Agent: flood.DefaultAgentRate, User: flood.DefaultUserRate,
				ApproverInflow: flood.DefaultApproverInflow,
				SessionLockout: flood.DefaultSessionLockout, AgentLockout: flood.DefaultAgentLockout,
				UserLockout:       flood.DefaultUserLockout,
				PendingPerSession: flood.DefaultPendingPerSession, PendingPerUser: flood.DefaultPendingPerUser,
				Target: flood.DefaultTargetRate, TargetLockout: flood.DefaultTargetLockout,
				FirstContact: flood.DefaultFirstContactRate, FirstContactLockout: flood.DefaultFirstContactLockout,
				FirstContactTarget: flood.DefaultFirstContactTargetRate,
			},
			caps: store.Caps{PerSession: flood.DefaultPendingPerSession, PerUser: flood.DefaultPendingPerUser},
		},
		{
			name: "caps off, lockout duration defaulted",
			in: flood.Limits{PendingPerSession: -1, PendingPerUser: -1, SessionLockout: flood.Lockout{After: 7},
				AgentLockout: flood.Lockout{After: 2}, ApproverInflow: flood.Rate{N: -1}},
			want: flood.Limits{
				Session: flood.DefaultSessionRate, Agent: flood.DefaultAgentRate, User: flood.DefaultUserRate,
				ApproverInflow: flood.Rate{N: -1},
				SessionLockout: flood.Lockout{After: 7, For: flood.DefaultSessionLockout.For},
				AgentLockout:   flood.Lockout{After: 2, For: flood.DefaultAgentLockout.For},
				UserLockout:    flood.DefaultUserLockout, PendingPerSession: -1, PendingPerUser: -1,
				Target: flood.DefaultTargetRate, TargetLockout: flood.DefaultTargetLockout,
				FirstContact: flood.DefaultFirstContactRate, FirstContactLockout: flood.DefaultFirstContactLockout,
				FirstContactTarget: flood.DefaultFirstContactTargetRate,
			},
			caps: store.Caps{},
		},
		{
			name: "custom caps",
			in:   flood.Limits{PendingPerSession: 2, PendingPerUser: 9},
			caps: store.Caps{PerSession: 2, PerUser: 9},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim, err := flood.New(memory.New(nil), tt.in, time.Now)
			require.NoError(t, err)
			if tt.want != (flood.Limits{}) {
				assert.Equal(t, tt.want, lim.Limits())
			}
			assert.Equal(t, tt.caps, lim.Caps())
		})
	}
}
