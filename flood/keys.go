package flood

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
)

// Counter keys. Each scope's subject is a tuple of ids: a session is
// (user, agent, session), an agent (user, agent), a user (user), an
// approver (approver). The tuple is encoded injectively, each id preceded
// by its length as a uvarint, so no two distinct tuples share an encoding
// whatever bytes the ids hold (':' and '/' included), and the encoding is
// hashed with SHA-256 under a tag naming the scope. Hashing makes any id
// fit the store's key size and keeps the ids themselves out of the
// counters; its collision resistance carries the encoding's injectivity
// over to the keys.

// encodeSubject returns the injective encoding of a scope's subject: the
// scope's name, then each id, each preceded by its length.
func encodeSubject(scope Scope, ids ...string) []byte {
	return appendSubject(nil, scope, ids...)
}

// appendSubject appends the encoding of a subject to b.
func appendSubject(b []byte, scope Scope, ids ...string) []byte {
	b = binary.AppendUvarint(b, uint64(len(scope)))
	b = append(b, scope...)
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(len(id)))
		b = append(b, id...)
	}
	return b
}

// subject names one scope's subject in counter keys: the hex SHA-256 of
// its encoding.
func subject(scope Scope, ids ...string) string {
	var buf [256]byte // most subjects fit: no allocation
	h := sha256.Sum256(appendSubject(buf[:0], scope, ids...))
	return hex.EncodeToString(h[:])
}

// rateKey names the counter of one scope's rate for the subject h. The
// window length is part of the name, so counts kept under other limits are
// never mixed in.
func rateKey(scope Scope, r Rate, h string) string {
	return rateKeyPrefix(scope, r) + h
}

// rateKeyPrefix starts the keys of every subject of one scope's rate of
// window r.Per.
func rateKeyPrefix(scope Scope, r Rate) string {
	return rateKeys + string(scope) + "/" + strconv.FormatInt(r.Per.Microseconds(), 10) + "us/"
}

// denialKey names the run of denials of one scope's subject h.
func denialKey(scope Scope, h string) string {
	return "flood/v2/denials/" + string(scope) + "/" + h
}
