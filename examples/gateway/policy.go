package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/agentstepup/asu/stepup/catalog"
)

// errPolicyFailed is the policy test command's answer when a case did not
// get the decision it wants; the report says which.
var errPolicyFailed = errors.New("policy test failed")

// runPolicy runs the policy commands, which read files only and start no
// server:
//
//	policy test -catalog FILE [-tests FILE] [-v]
//	policy diff OLD NEW
func runPolicy(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 {
		return errors.New("policy needs a command: test -catalog FILE [-tests FILE], or diff OLD NEW")
	}
	switch args[0] {
	case "test":
		return runPolicyTest(ctx, stdout, stderr, args[1:])
	case "diff":
		return runPolicyDiff(stdout, stderr, args[1:])
	}
	return fmt.Errorf("unknown policy command %q (test or diff)", args[0])
}

// runPolicyTest runs a catalog's test file against it and fails on any
// case that does not get the decision it wants.
func runPolicyTest(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("policy test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("catalog", "", "the catalog `file` to test")
	testsPath := fs.String("tests", "", "the test `file` (default: the catalog's name with .test before its extension)")
	verbose := fs.Bool("v", false, "list passing cases too")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" || fs.NArg() > 0 {
		return errors.New("usage: policy test -catalog FILE [-tests FILE] [-v]")
	}
	if *testsPath == "" {
		*testsPath = catalog.DefaultTests(*path)
	}
	c, err := catalog.ParseFile(*path, nil)
	if err != nil {
		return err
	}
	tests, err := catalog.ParseTestsFile(*testsPath)
	if err != nil {
		return err
	}
	rep, err := c.Check(ctx, tests)
	if err != nil {
		return err
	}
	if err := rep.Write(stdout, *verbose); err != nil {
		return err
	}
	if n := rep.Failed(); n > 0 {
		return fmt.Errorf("%w: %d of %d cases", errPolicyFailed, n, len(rep.Results))
	}
	return nil
}

// runPolicyDiff shows what changes from one catalog file to another.
func runPolicyDiff(stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("policy diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return errors.New("usage: policy diff OLD NEW (two catalog files)")
	}
	old, err := catalog.ParseFile(fs.Arg(0), nil)
	if err != nil {
		return err
	}
	new, err := catalog.ParseFile(fs.Arg(1), nil)
	if err != nil {
		return err
	}
	return catalog.Compare(old, new).Write(stdout)
}
