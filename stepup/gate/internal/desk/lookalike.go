package desk

import (
	"math/rand/v2"
	"strings"
)

// The look-alikes an approver picks the real key value from. They are
// the spellings an attacker would use: a letter swapped for one that
// looks like it (rn for m, 1 for l, 0 for o), two letters transposed, a
// letter doubled or dropped, another top-level domain; for amounts a
// digit more or less, two digits transposed, a digit changed. Each is a
// different value from the real one and from the others, so exactly one
// option is right.

// confirmChoices is how many options an approver picks from: the real
// value and confirmChoices-1 look-alikes.
const confirmChoices = 4

// maxKeyLen bounds the key values confirmed: longer ones are cut by the
// card already (a registrable domain is at most 253 bytes), and the
// generator's work is linear in it.
const maxKeyLen = 256

// lookalikes returns n distinct look-alikes of value (a registrable
// domain when kind is keyDomain, an amount as the card shows it when
// kind is keyAmount), none equal to value, drawn deterministically from
// rng.
func lookalikes(kind, value string, rng *rand.Rand, n int) []string {
	var cands []string
	if kind == keyAmount {
		cands = amountLookalikes(value)
	} else {
		cands = domainLookalikes(value)
	}
	seen := map[string]bool{value: true}
	var uniq []string
	for _, c := range cands {
		if c != "" && !seen[c] {
			seen[c] = true
			uniq = append(uniq, c)
		}
	}
	rng.Shuffle(len(uniq), func(i, j int) { uniq[i], uniq[j] = uniq[j], uniq[i] })
	// Fallbacks, always distinct, in case the value is too short to
	// vary (a one-letter domain, the amount 0).
	for i := 1; len(uniq) < n; i++ {
		c := strings.Repeat("1", i) + value
		if kind == keyDomain {
			c = strings.Repeat("w", i) + value
		}
		if !seen[c] {
			seen[c] = true
			uniq = append(uniq, c)
		}
	}
	return uniq[:n]
}

// homoglyphs are ASCII spellings that pass for a letter at a glance.
var homoglyphs = map[byte][]string{
	'm': {"rn", "nn"}, 'o': {"0"}, 'l': {"1", "I"}, 'i': {"l", "1"}, 'e': {"c"}, 'a': {"e"},
	'w': {"vv"}, 'd': {"cl"}, 'g': {"q"}, 'n': {"m"}, 'u': {"v"}, 's': {"5"}, 'b': {"6"},
}

// domainLookalikes spells domain (an A-label registrable domain) the
// ways a phishing domain does.
func domainLookalikes(domain string) []string {
	label, tld, ok := strings.Cut(domain, ".")
	if !ok {
		label, tld = domain, ""
	}
	join := func(l string) string {
		if tld == "" {
			return l
		}
		return l + "." + tld
	}
	var out []string
	for i := 0; i < len(label); i++ {
		for _, h := range homoglyphs[label[i]] {
			out = append(out, join(label[:i]+h+label[i+1:]))
		}
		if i+1 < len(label) && label[i] != label[i+1] {
			out = append(out, join(label[:i]+label[i+1:i+2]+label[i:i+1]+label[i+2:]))
		}
		if len(label) > 2 {
			out = append(out, join(label[:i]+label[i+1:]))
		}
		out = append(out, join(label[:i+1]+label[i:]))
	}
	out = append(out, join(label+"s"), join(label+"-secure"), join(label+"-pay"))
	for _, t := range []string{"com", "co", "net", "org", "io"} {
		if t != tld {
			out = append(out, label+"."+t)
		}
	}
	return out
}

// amountLookalikes varies the number that starts amount (120.50 "EUR")
// and keeps what follows it (the quoted currency).
func amountLookalikes(amount string) []string {
	end := 0
	for end < len(amount) && (amount[end] >= '0' && amount[end] <= '9' || amount[end] == '.' || amount[end] == '-') {
		end++
	}
	num, rest := amount[:end], amount[end:]
	if num == "" {
		return nil
	}
	whole, frac, hasFrac := strings.Cut(num, ".")
	join := func(w string) string {
		if hasFrac {
			return w + "." + frac + rest
		}
		return w + rest
	}
	var out []string
	digits := strings.TrimPrefix(whole, "-")
	sign := whole[:len(whole)-len(digits)]
	out = append(out, join(sign+digits+"0"))
	if len(digits) > 1 {
		out = append(out, join(sign+digits[:len(digits)-1]))
	}
	for i := 0; i < len(digits); i++ {
		if i+1 < len(digits) && digits[i] != digits[i+1] {
			out = append(out, join(sign+digits[:i]+digits[i+1:i+2]+digits[i:i+1]+digits[i+2:]))
		}
		if d := digits[i]; d >= '0' && d <= '9' {
			next := '0' + (d-'0'+1)%10
			if i == 0 && next == '0' && len(digits) > 1 {
				next = '1' + (d-'0')%9
			}
			out = append(out, join(sign+digits[:i]+string(rune(next))+digits[i+1:]))
		}
	}
	if hasFrac && len(frac) > 1 {
		out = append(out, sign+digits+frac[:1]+"."+frac[1:]+rest)
	}
	return out
}
