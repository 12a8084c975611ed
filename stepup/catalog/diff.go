package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Change is one difference between two catalogs: Op is "+" (added), "-"
// (removed) or "~" (changed); Subject is "tool NAME" or "group NAME";
// Field is the JSON pointer of what changed within it ("" for the whole
// subject; "/members" for a member who joined or left a group); Old and
// New are the values as the files spell them, in JSON ("" when absent).
type Change struct {
	Op, Subject, Field string
	Old, New           string
}

// String is the change as one line.
func (c Change) String() string {
	switch {
	case c.Op == "+" && c.Field == "":
		return "+ " + c.Subject + ": " + c.New
	case c.Op == "-" && c.Field == "":
		return "- " + c.Subject + ": " + c.Old
	case c.Op == "+":
		return "+ " + c.Subject + ": " + c.Field + ": " + c.New
	case c.Op == "-":
		return "- " + c.Subject + ": " + c.Field + ": " + c.Old
	}
	return fmt.Sprintf("%s %s: %s: %s -> %s", c.Op, c.Subject, c.Field, or(c.Old, "(none)"), or(c.New, "(none)"))
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Diff is what changes from catalog old to catalog new: tools added,
// removed or changed (class, schema, limits, approvers, quorum, timeout,
// card, executor: every field), and approver groups and their members.
type Diff struct {
	OldVersion, NewVersion string
	Changes                []Change
}

// Compare returns the differences from old to new, tools and groups in
// name order, fields in pointer order.
func Compare(old, new *Catalog) Diff {
	d := Diff{OldVersion: old.Version, NewVersion: new.Version}
	oldTools, newTools := byName(old.Tools, func(t Tool) string { return t.Name }), byName(new.Tools, func(t Tool) string { return t.Name })
	d.Changes = append(d.Changes, compareSets("tool ", oldTools, newTools, toolSummary)...)
	oldGroups, newGroups := byName(old.Groups, func(g Group) string { return g.Name }), byName(new.Groups, func(g Group) string { return g.Name })
	for _, c := range compareSets("group ", oldGroups, newGroups, func(g Group) string { return strings.Join(g.Members, ", ") }) {
		if c.Op != "~" {
			d.Changes = append(d.Changes, c)
		}
	}
	// A group's members are a set: who joined and who left, not which
	// position changed.
	for _, name := range slices.Sorted(maps.Keys(oldGroups)) {
		n, ok := newGroups[name]
		if !ok {
			continue
		}
		o := oldGroups[name]
		for _, m := range n.Members {
			if !slices.Contains(o.Members, m) {
				d.Changes = append(d.Changes, Change{Op: "+", Subject: "group " + name, Field: "/members", New: m})
			}
		}
		for _, m := range o.Members {
			if !slices.Contains(n.Members, m) {
				d.Changes = append(d.Changes, Change{Op: "-", Subject: "group " + name, Field: "/members", Old: m})
			}
		}
	}
	return d
}

func byName[T any](items []T, name func(T) string) map[string]T {
	m := make(map[string]T, len(items))
	for _, it := range items {
		m[name(it)] = it
	}
	return m
}

func toolSummary(t Tool) string {
	s := t.Class
	if t.Approvers != "" {
		s += ", approvers " + t.Approvers
	}
	if t.Quorum > 1 {
		s += fmt.Sprintf(", quorum %d", t.Quorum)
	}
	if t.Executor != nil {
		s += ", executor " + t.Executor.URL
	}
	return s
}

func compareSets[T any](kind string, old, new map[string]T, summary func(T) string) []Change {
	var out []Change
	names := slices.Sorted(maps.Keys(old))
	for n := range new {
		if _, ok := old[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		o, inOld := old[n]
		w, inNew := new[n]
		switch {
		case !inNew:
			out = append(out, Change{Op: "-", Subject: kind + n, Old: summary(o)})
		case !inOld:
			out = append(out, Change{Op: "+", Subject: kind + n, New: summary(w)})
		default:
			ol, nl := leaves(o), leaves(w)
			for _, f := range slices.Sorted(maps.Keys(union(ol, nl))) {
				if ol[f] != nl[f] {
					out = append(out, Change{Op: "~", Subject: kind + n, Field: f, Old: ol[f], New: nl[f]})
				}
			}
		}
	}
	return out
}

func union(a, b map[string]string) map[string]bool {
	u := make(map[string]bool, len(a)+len(b))
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

// leaves flattens v, as JSON, to its scalar values by JSON pointer; an
// empty object or array is a leaf of its own.
func leaves(v any) map[string]string {
	raw, err := json.Marshal(v)
	if err != nil {
		return map[string]string{"": "(unreadable)"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return map[string]string{"": "(unreadable)"}
	}
	out := map[string]string{}
	flatten("", doc, out)
	return out
}

func flatten(ptr string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[ptr] = "{}"
		}
		for k, c := range x {
			flatten(ptr+"/"+escape(k), c, out)
		}
	case []any:
		if len(x) == 0 {
			out[ptr] = "[]"
		}
		for i, c := range x {
			flatten(fmt.Sprintf("%s/%d", ptr, i), c, out)
		}
	default:
		b, _ := json.Marshal(x)
		out[ptr] = string(b)
	}
}

// Write prints the diff, one change a line, after what the version change
// means: an approval is bound to the policy version it was made under,
// so approvals in flight are void once the new version serves.
func (d Diff) Write(w io.Writer) error {
	var b strings.Builder
	switch {
	case d.OldVersion != d.NewVersion:
		fmt.Fprintf(&b, "policy version: %s -> %s\n", d.OldVersion, d.NewVersion)
		fmt.Fprintf(&b, "  once %s serves, approvals made under %s and not yet executed are void: Execute refuses them, and their calls must be proposed again\n",
			d.NewVersion, d.OldVersion)
	case len(d.Changes) > 0:
		fmt.Fprintf(&b, "policy version: %s, unchanged, but the policy changed: give the new file a new version, or approvals made under the old rules run under the new ones\n", d.OldVersion)
	default:
		fmt.Fprintf(&b, "policy version: %s, unchanged\n", d.OldVersion)
	}
	if len(d.Changes) == 0 {
		b.WriteString("no changes to tools or groups\n")
	}
	for _, c := range d.Changes {
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
