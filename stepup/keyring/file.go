package keyring

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MaxFileSize bounds a key file.
const MaxFileSize = 128 << 10

// fileHeader is the first line [Encode] writes.
const fileHeader = "# asu key ring: id state secret [grace-until]; keep this file secret (mode 0600)"

// FileError is the refusal of a key file: the file, the line (0 for the
// file as a whole) and the field at fault. It never holds a secret.
type FileError struct {
	File  string
	Line  int
	Field string // "id", "state", "secret", "grace-until", or "" for the line or file
	Err   error  // wraps [ErrInvalid]
}

// Error implements error.
func (e *FileError) Error() string {
	switch {
	case e.Line == 0:
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	case e.Field == "":
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: field %s: %v", e.File, e.Line, e.Field, e.Err)
}

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// Parse reads a key file named file (the name is for errors only). The
// format is one key per line, fields separated by spaces or tabs, '#'
// starting a comment line, blank lines ignored:
//
//	# id              state    secret                          grace-until
//	3f9a1c2b4d5e6f70  retired  hex:8c1f...(64 hex digits or more)  2026-12-03T01:00:00Z
//	0b7e44a1c2d3e4f5  current  base64:q83v...
//	next              verify   hex:51aa...
//
// id is the key's id, or "-" for its [DefaultID]; state is current,
// verify or retired; secret is "hex:" or "base64:" (standard, padded)
// and [MinSecretSize] to [MaxSecretSize] bytes; grace-until (RFC 3339)
// is given for a retired key only. The ring must be valid as [New]
// requires. Every refusal is a [*FileError] naming the line and field.
func Parse(file string, b []byte) (*Ring, error) {
	keys, lines, err := parseLines(file, b, "secret", decodeSecret)
	if err != nil {
		return nil, err
	}
	r, err := New(keys...)
	if err != nil {
		return nil, &FileError{File: file, Line: ringLine(err, keys, lines), Err: err}
	}
	return r, nil
}

// parseLines reads the key lines of a ring file, their third field (named
// field) decoded by decode, and the line number of each.
func parseLines(file string, b []byte, field string, decode func(string) ([]byte, error)) ([]Key, []int, error) {
	if len(b) > MaxFileSize {
		return nil, nil, &FileError{File: file, Err: fmt.Errorf("%w: the file is over %d bytes", ErrInvalid, MaxFileSize)}
	}
	if bytes.HasPrefix(b, []byte("\ufeff")) {
		return nil, nil, &FileError{File: file, Line: 1, Err: fmt.Errorf(
			"%w: the file starts with a byte order mark (U+FEFF), which would be read as part of the first key id; save it as UTF-8 without one", ErrInvalid)}
	}
	var (
		keys  []Key
		lines []int
	)
	for n, line := range bytes.Split(b, []byte("\n")) {
		text := strings.TrimSuffix(string(line), "\r")
		f := strings.Fields(text)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		k, err := parseLine(f, field, decode)
		if err != nil {
			err.File, err.Line = file, n+1
			return nil, nil, err
		}
		if len(keys) == MaxKeys {
			return nil, nil, &FileError{File: file, Line: n + 1, Err: fmt.Errorf("%w: more than %d keys", ErrInvalid, MaxKeys)}
		}
		keys = append(keys, k)
		lines = append(lines, n+1)
	}
	if len(keys) == 0 {
		return nil, nil, &FileError{File: file, Err: fmt.Errorf("%w: the file holds no key", ErrInvalid)}
	}
	return keys, lines, nil
}

// ringLine finds the line a ring-wide refusal is about: the last key its
// message names, or 0 for the file.
func ringLine(err error, keys []Key, lines []int) int {
	at := 0
	for i, k := range keys {
		if strings.Contains(err.Error(), fmt.Sprintf("%q", k.ID)) {
			at = lines[i]
		}
	}
	return at
}

// parseLine reads the fields of one key line.
func parseLine(f []string, field string, decode func(string) ([]byte, error)) (Key, *FileError) {
	bad := func(field, format string, args ...any) (Key, *FileError) {
		return Key{}, &FileError{Field: field, Err: invalid(fmt.Errorf(format, args...))}
	}
	if len(f) < 3 || len(f) > 4 {
		return bad("", "a key line has 3 fields (id state secret), or 4 for a retired key, not %d", len(f))
	}
	var k Key
	switch f[1] {
	case "current":
		k.State = Current
	case "verify":
		k.State = Verify
	case "retired":
		k.State = Retired
	default:
		return bad("state", "must be current, verify or retired")
	}
	secret, err := decode(f[2])
	if err != nil {
		return Key{}, &FileError{Field: field, Err: invalid(err)}
	}
	k.Secret = secret
	k.ID = f[0]
	if k.ID == "-" && field == "secret" {
		k.ID = DefaultID(secret)
	} else if err := ValidID(k.ID); err != nil {
		return Key{}, &FileError{Field: "id", Err: invalid(err)}
	}
	switch {
	case k.State == Retired && len(f) != 4:
		return bad("grace-until", "a retired key needs the time its grace ends (RFC 3339)")
	case k.State != Retired && len(f) == 4:
		return bad("grace-until", "only a retired key has a grace end")
	case len(f) == 4:
		t, err := time.Parse(time.RFC3339, f[3])
		if err != nil {
			return bad("grace-until", "not an RFC 3339 time")
		}
		k.GraceUntil = t
	}
	return k, nil
}

// invalid is err as a refusal of the file: wrapping [ErrInvalid] once,
// so a reason that already does (as [ValidID]'s) keeps its words and is
// not prefixed twice, and one that does not is prefixed once.
func invalid(err error) error {
	if errors.Is(err, ErrInvalid) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrInvalid, err)
}

// decodeSecret decodes "hex:..." or "base64:..." of [MinSecretSize] to
// [MaxSecretSize] bytes. Its errors never quote the input.
func decodeSecret(s string) ([]byte, error) {
	b, err := decodeBytes(s)
	if err != nil {
		return nil, err
	}
	if n := len(b); n < MinSecretSize || n > MaxSecretSize {
		return nil, fmt.Errorf("%d bytes; a secret is %d to %d", n, MinSecretSize, MaxSecretSize)
	}
	return b, nil
}

// decodePublic decodes "ed25519:" and 64 hex digits.
func decodePublic(s string) ([]byte, error) {
	h, ok := strings.CutPrefix(s, "ed25519:")
	if !ok {
		return nil, errors.New(`must start with "ed25519:"`)
	}
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("not %d bytes of hex", ed25519.PublicKeySize)
	}
	return b, nil
}

// decodeBytes decodes "hex:..." or "base64:...".
func decodeBytes(s string) ([]byte, error) {
	switch {
	case strings.HasPrefix(s, "hex:"):
		b, err := hex.DecodeString(s[len("hex:"):])
		if err != nil {
			return nil, errors.New("not hex")
		}
		return b, nil
	case strings.HasPrefix(s, "base64:"):
		b, err := base64.StdEncoding.Strict().DecodeString(s[len("base64:"):])
		if err != nil {
			return nil, errors.New("not standard base64")
		}
		return b, nil
	}
	return nil, errors.New(`must start with "hex:" or "base64:"`)
}

// Encode writes r in the format [Parse] reads, secrets in hex. The result
// holds every secret of the ring: write it only to a file of mode 0600.
func Encode(r *Ring) []byte {
	var b bytes.Buffer
	b.WriteString(fileHeader + "\n")
	for _, k := range r.keys {
		b.WriteString(k.ID + " " + k.State.String() + " hex:" + hex.EncodeToString(k.Secret))
		if k.State == Retired {
			b.WriteString(" " + k.GraceUntil.UTC().Format(time.RFC3339Nano))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// publicHeader is the first line [EncodePublic] writes.
const publicHeader = "# asu public key ring: id state public-key [grace-until]; publish it to verifiers"

// EncodePublic writes the public half of a ring in the format
// [ParsePublic] reads: the key file's lines, each with "ed25519:" and the
// public key's hex in place of the secret. It holds no secret.
func EncodePublic(p *PublicRing) []byte {
	var b bytes.Buffer
	b.WriteString(publicHeader + "\n")
	for _, k := range p.keys {
		b.WriteString(k.ID + " " + k.State.String() + " ed25519:" + hex.EncodeToString(k.Key))
		if k.State == Retired {
			b.WriteString(" " + k.GraceUntil.UTC().Format(time.RFC3339Nano))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ParsePublic reads a public key ring file named file (for errors only),
// as [EncodePublic] writes it: the format of [Parse] with the third field
// "ed25519:" and 64 hex digits, and every id written out. Refusals are
// [*FileError]s naming the line and field.
func ParsePublic(file string, b []byte) (*PublicRing, error) {
	keys, lines, err := parseLines(file, b, "public-key", decodePublic)
	if err != nil {
		return nil, err
	}
	pub := make([]PublicKey, len(keys))
	for i, k := range keys {
		if k.ID == "-" {
			return nil, &FileError{File: file, Line: lines[i], Field: "id", Err: fmt.Errorf("%w: a public ring names every key's id", ErrInvalid)}
		}
		pub[i] = PublicKey{ID: k.ID, Key: k.Secret, State: k.State, GraceUntil: k.GraceUntil}
	}
	p, err := NewPublic(pub...)
	if err != nil {
		return nil, &FileError{File: file, Line: ringLine(err, keys, lines), Err: err}
	}
	return p, nil
}
