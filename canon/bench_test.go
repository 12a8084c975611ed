package canon_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/require"

	"github.com/agentstepup/asu/canon"
)

// benchSizes are the approximate sizes of the effect-like documents.
var benchSizes = []struct {
	name string
	size int
}{{"1KB", 1 << 10}, {"100KB", 100 << 10}}

// effectLike builds an effect as a runtime would send it, about size bytes:
// keys in no particular order, strings with a few escapes and non-ASCII
// characters, amounts and counts as numbers, and an args object whose line
// items grow to reach the size.
func effectLike(size int) []byte {
	var items []string
	head := `{"tool":"create_invoice","task":"task-2026-11-29-0042","step":"7","audience":"billing-executor",` +
		`"principal":{"user":"alice@example.com","delegations":["finance-ops","eu-billing"],"agent":"invoice-bot/2.3"},` +
		`"policy_version":"2026-11-01",` +
		`"refs":[{"name":"q3.csv","kind":"file","size":48213,"unbound":"","sha256":"50f739205e4a07e3918eaf4e276e090c016bb14be6b41d591150c6181b91b492"}],` +
		`"args":{"currency":"EUR","customer":{"name":"Société Générale \"Nord\"","vat":"FR40303265045","address":"12 rue de l'Église\n75001 Paris"},` +
		`"due_days":30,"note":"Q3 services \u2014 see attached\tbreakdown","total":%s,"items":[%s]}}`
	total := 0.0
	for i := 0; ; i++ {
		price := float64(1000+i*37%9000) / 100
		qty := 1 + i%12
		total += price * float64(qty)
		items = append(items, fmt.Sprintf(
			`{"sku":"SKU-%05d","qty":%d,"description":"Consulting, week %d \u2013 \"phase %c\"","unit_price":%.2f,"tax_rate":0.2,"tags":["q3","eu"]}`,
			i, qty, i%52+1, 'A'+rune(i%26), price))
		doc := fmt.Sprintf(head, fmt.Sprintf("%.2f", total), strings.Join(items, ","))
		if len(doc) >= size {
			return []byte(doc)
		}
	}
}

func BenchmarkCanonicalize(b *testing.B) {
	for _, s := range benchSizes {
		in := effectLike(s.size)
		want, err := jcs.Transform(in)
		require.NoError(b, err)
		got, err := canon.Canonicalize(in)
		require.NoError(b, err)
		require.Equal(b, string(want), string(got), "benchmark input canonicalizes differently")
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				out, err := canon.Canonicalize(in)
				if err != nil {
					b.Fatal(err)
				}
				_ = sha256.Sum256(out)
			}
		})
	}
}

// BenchmarkJCSTransform is the baseline: jcs.Transform and SHA-256 on the
// same bytes.
func BenchmarkJCSTransform(b *testing.B) {
	for _, s := range benchSizes {
		in := effectLike(s.size)
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				out, err := jcs.Transform(in)
				if err != nil {
					b.Fatal(err)
				}
				_ = sha256.Sum256(out)
			}
		})
	}
}

// benchArgs returns the args object of effectLike, as a runtime sends it
// (members out of order) and as a store holds it (canonical).
func benchArgs(b *testing.B, size int) (raw, canonical []byte) {
	var doc struct{ Args json.RawMessage }
	require.NoError(b, json.Unmarshal(effectLike(size), &doc))
	c, err := canon.Canonicalize(doc.Args)
	require.NoError(b, err)
	return doc.Args, c
}

// BenchmarkSeal seals an effect (canonical bytes, digest and args Value)
// next to its baseline in the same run, BenchmarkSeal/baseline-*: the
// Canonicalize and SHA-256 of the same args that a caller paid before,
// once per use. "canonical" args come from a store, "raw" ones from a
// runtime.
func BenchmarkSeal(b *testing.B) {
	for _, s := range benchSizes {
		raw, canonical := benchArgs(b, s.size)
		for _, in := range []struct {
			name string
			args []byte
		}{{"raw", raw}, {"canonical", canonical}} {
			e := sampleEffect()
			e.Args = in.args
			b.Run("baseline-"+in.name+"-"+s.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.args)))
				b.ReportAllocs()
				for b.Loop() {
					out, err := canon.Canonicalize(in.args)
					if err != nil {
						b.Fatal(err)
					}
					_ = sha256.Sum256(out)
				}
			})
			b.Run(in.name+"-"+s.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.args)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := canon.Seal(e); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkParseValue parses canonical args into a Value, against
// encoding/json decoding the same bytes into any with UseNumber, the
// private models it replaced.
func BenchmarkParseValue(b *testing.B) {
	for _, s := range benchSizes {
		_, canonical := benchArgs(b, s.size)
		b.Run("canon-"+s.name, func(b *testing.B) {
			b.SetBytes(int64(len(canonical)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := canon.ParseValue(canonical); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("encoding-json-"+s.name, func(b *testing.B) {
			b.SetBytes(int64(len(canonical)))
			b.ReportAllocs()
			for b.Loop() {
				dec := json.NewDecoder(bytes.NewReader(canonical))
				dec.UseNumber()
				var v any
				if err := dec.Decode(&v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
