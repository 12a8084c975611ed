package attackkit_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/agentstepup/asu/stepup/attackkit"
)

// ExampleRemote aims the kit at a service running as its own process:
// the kit speaks to the agent API with a runtime token, its people enroll
// with invites the operator mints and answer on the approval site, and
// the service's executors report what ran to the kit's Tools.
func ExampleRemote() {
	adapter := func(t testing.TB, tools *attackkit.Tools) attackkit.Target {
		runs := httptest.NewServer(tools) // the service's executors POST each run here
		t.Cleanup(runs.Close)
		// ... start the service with its executors pointed at runs.URL ...
		tg, err := attackkit.Remote(attackkit.RemoteConfig{
			AgentURL: "http://127.0.0.1:8700", Token: "the runtime token the service printed",
			Site: attackkit.SiteConfig{URL: "http://localhost:8701",
				Invite: func(ctx context.Context, who string) (string, error) {
					return "", nil // run the service's invite command for who and return its token
				}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	testAttackKit := func(t *testing.T) { attackkit.Run(t, adapter) }
	_ = testAttackKit
}
