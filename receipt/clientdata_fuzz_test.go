package receipt

import (
	"encoding/json"
	"testing"
)

// FuzzParseClientData: the client data Verify accepts reads the same to
// every reader: encoding/json's, which matches member names without case
// and keeps the last of a repeated member, and an exact-name reader that
// keeps the last too (JSON.parse, Python's json), agree with it on type,
// challenge, origin and crossOrigin.
func FuzzParseClientData(f *testing.F) {
	for _, s := range []string{
		`{"type":"webauthn.get","challenge":"AAAA","origin":"https://a.example","crossOrigin":false}`,
		`{"type":"webauthn.get","challenge":"AAAA","origin":"https://a.example","Origin":"https://b.example"}`,
		`{"type":"webauthn.get","type":"webauthn.create"}`,
		`{"TYPE":"webauthn.get","cro\u017fsOrigin":true,"tokenBinding":{"status":"present"}}`,
		`{"\u0074ype":"webauthn.get","other_keys_can_be_added_here":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cd, _ := parseClientData(raw)
		if cd == nil {
			return
		}
		var lenient struct {
			Type        string `json:"type"`
			Challenge   string `json:"challenge"`
			Origin      string `json:"origin"`
			CrossOrigin bool   `json:"crossOrigin"`
		}
		if err := json.Unmarshal(raw, &lenient); err != nil {
			t.Fatalf("accepted client data encoding/json refuses: %v", err)
		}
		if lenient.Type != cd.Type || lenient.Challenge != cd.Challenge || lenient.Origin != cd.Origin ||
			lenient.CrossOrigin != cd.CrossOrigin {
			t.Fatalf("encoding/json reads %+v, Verify %+v", lenient, *cd)
		}
		var exact map[string]any
		if err := json.Unmarshal(raw, &exact); err != nil {
			t.Fatal(err)
		}
		str := func(k string) string { s, _ := exact[k].(string); return s }
		cross, _ := exact["crossOrigin"].(bool)
		if str("type") != cd.Type || str("challenge") != cd.Challenge || str("origin") != cd.Origin || cross != cd.CrossOrigin {
			t.Fatalf("an exact reader reads %v, Verify %+v", exact, *cd)
		}
	})
}
