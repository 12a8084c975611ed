package catalog

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentstepup/asu/canon"
	"github.com/agentstepup/asu/card"
	"github.com/agentstepup/asu/stepup/plug"
)

// check is what the schema cannot say, each refusal placed on its field.
func (c *Catalog) check(o Options) *Error {
	groups := map[string]int{}
	for i, g := range c.Groups {
		ptr := "/groups/" + strconv.Itoa(i)
		if j, dup := groups[g.Name]; dup {
			return c.src.at(ptr+"/name", fmt.Sprintf("group %q is given twice (first at /groups/%d)", g.Name, j))
		}
		groups[g.Name] = i
		if len(g.Members) == 0 {
			return c.src.at(ptr+"/members", "a group needs members")
		}
		for k, m := range g.Members {
			if j := slices.Index(g.Members, m); j < k {
				return c.src.at(ptr+"/members/"+strconv.Itoa(k), fmt.Sprintf("a member twice (first at %s/members/%d)", ptr, j))
			}
			if err := canon.CheckPrincipalID(m); err != nil || !strings.HasPrefix(m, canon.PrefixUser) {
				return c.src.at(ptr+"/members/"+strconv.Itoa(k), "not a person's principal id (user:name, lowercase a-z, 0-9 and ._@+-)")
			}
		}
	}
	kinds := slices.Concat(builtinRefKinds, o.RefKinds)
	tools := map[string]int{}
	for i, t := range c.Tools {
		ptr := "/tools/" + strconv.Itoa(i)
		if j, dup := tools[t.Name]; dup {
			return c.src.at(ptr+"/name", fmt.Sprintf("tool %q is given twice (first at /tools/%d)", t.Name, j))
		}
		tools[t.Name] = i
		if plug.ReservedTool(t.Name) {
			return c.src.at(ptr+"/name", fmt.Sprintf("tool names starting with %q are the gate's own", plug.ReservedToolPrefix))
		}
		for _, arg := range sortedKeys(t.Refs) {
			if !slices.Contains(kinds, t.Refs[arg]) {
				return c.src.at(ptr+"/refs/"+escape(arg), fmt.Sprintf("unknown reference kind %q (known: %s)", t.Refs[arg], strings.Join(kinds, ", ")))
			}
		}
		for _, arg := range sortedKeys(t.MaxAmount) {
			if _, err := canon.CompareDecimal(string(t.MaxAmount[arg]), "0"); err != nil {
				return c.src.at(ptr+"/max_amount/"+escape(arg), "not an exact decimal")
			}
		}
		if e := c.checkGroup(o, groups, ptr+"/approvers", t.Approvers); e != nil {
			return e
		}
		if t.Quorum > 1 {
			if t.Approvers == "" {
				return c.src.at(ptr+"/quorum", fmt.Sprintf("a quorum of %d needs an approver group (approvers)", t.Quorum))
			}
			if gi, ok := groups[t.Approvers]; ok && len(c.Groups[gi].Members) < t.Quorum {
				return c.src.at(ptr+"/quorum", fmt.Sprintf("a quorum of %d is larger than group %q (%d members)",
					t.Quorum, t.Approvers, len(c.Groups[gi].Members)))
			}
		}
		if e := c.checkTimeout(o, groups, ptr+"/timeout", t); e != nil {
			return e
		}
		if t.Executor != nil {
			if o.NoExecutors {
				return c.src.at(ptr+"/executor", "this program runs its tools itself; remove the executor block")
			}
			if e := c.checkExecutor(ptr+"/executor", t.Executor); e != nil {
				return e
			}
		}
	}
	return nil
}

func (c *Catalog) checkGroup(o Options, groups map[string]int, ptr, name string) *Error {
	if name == "" || o.ProgramGroups {
		return nil
	}
	if _, ok := groups[name]; !ok {
		return c.src.at(ptr, fmt.Sprintf("names group %q, which groups does not define", name))
	}
	return nil
}

func (c *Catalog) checkTimeout(o Options, groups map[string]int, ptr string, t Tool) *Error {
	to := t.Timeout
	if to == nil {
		return nil
	}
	if to.After != "" {
		if d, err := time.ParseDuration(to.After); err != nil || d <= 0 {
			return c.src.at(ptr+"/after", "not a positive duration (e.g. \"15m\")")
		}
	}
	switch to.Outcome {
	case "escalate":
		if to.EscalateTo == "" {
			return c.src.at(ptr+"/escalate_to", "outcome escalate needs escalate_to, the group that decides after")
		}
	case "alternative":
		if to.Alternative == "" {
			return c.src.at(ptr+"/alternative", "outcome alternative needs alternative, the tool proposed instead")
		}
	}
	if e := c.checkGroup(o, groups, ptr+"/escalate_to", to.EscalateTo); e != nil {
		return e
	}
	if alt := to.Alternative; alt != "" {
		a, ok := c.Tool(alt)
		switch {
		case alt == t.Name:
			return c.src.at(ptr+"/alternative", "a tool cannot be its own alternative")
		case !ok:
			return c.src.at(ptr+"/alternative", fmt.Sprintf("names tool %q, which the catalog does not list", alt))
		case a.Class != card.ClassRead && a.Class != card.ClassReversible:
			return c.src.at(ptr+"/alternative", fmt.Sprintf("alternative %q is %s, not read or reversible", alt, a.Class))
		}
	}
	return nil
}

func (c *Catalog) checkExecutor(ptr string, e *Executor) *Error {
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return c.src.at(ptr+"/url", "not an http or https URL with a host (and no user or fragment)")
	}
	if e.Timeout == 0 {
		e.Timeout = DefaultExecutorTimeout
	} else if e.Timeout < MinExecutorTimeout || e.Timeout > MaxExecutorTimeout {
		return c.src.at(ptr+"/timeout", fmt.Sprintf("not a duration from %v to %v", MinExecutorTimeout, MaxExecutorTimeout))
	}
	if e.Retries < 0 || e.Retries > MaxExecutorRetries {
		return c.src.at(ptr+"/retries", fmt.Sprintf("not from 0 to %d", MaxExecutorRetries))
	}
	return nil
}

// escape is one JSON pointer token.
func escape(s string) string { return pointer([]string{s})[1:] }
