package mcpgate

// RefusesMembers reports whether the strict check refuses raw.
func RefusesMembers(raw []byte) bool { return checkMembers(raw) != nil }

// RefusesMembersByTokens is the strict check by encoding/json's tokens,
// which the fast scanner must agree with.
func RefusesMembersByTokens(raw []byte) bool { return checkMembersByTokens(raw) != nil }
