package attackkit

// The principals of every call the kit proposes. An integration under test
// must let [Agent] propose for [User], and [User] must be able to approve;
// [Stranger] is another person, who may not decide [User]'s calls.
const (
	User     = "user:dana"
	Agent    = "agent:reports"
	Stranger = "user:eve"
)
