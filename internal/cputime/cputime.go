// Package cputime reads the CPU time this process has used, for the
// tests and benchmarks that compare what work costs by it rather than
// by the clock of a shared machine.
package cputime
