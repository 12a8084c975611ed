package mcpgate

// RefusesMembers reports whether the strict check refuses raw.
func RefusesMembers(raw []byte) bool { return checkMembers(raw) != nil }
