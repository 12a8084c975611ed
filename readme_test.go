package asu_test

// The README's commands and its mount sketch, held to what the
// repository does.
//
// # Which shell blocks run
//
// Every fenced block whose info string is sh, shell, bash or console in
// README.md and examples/*/README.md holds commands, one a line (a line
// ending in a backslash continues on the next; "# ..." comments and a
// leading "$ " are dropped). A block is not run when the last non-blank
// line before its opening fence is an HTML comment of the form
//
//	<!-- not run: REASON -->
//
// where REASON says why in a few words ("starts a server", "needs a
// browser", "runs the CI itself", "needs npm"). Mark every block that
// starts a server or other long-running process, needs something a test
// machine lacks, or holds placeholders to fill in. A block that has its
// own test running it verbatim may say so: "<!-- not run: run by
// TestServiceQuickstart -->".
//
// TestReadmeCommandsExist always checks that every command of every
// block, marked or not, names a program the repository has (go run, go
// build, go test and go vet of ./... paths, ./scripts); with
// ASU_README_COMMANDS=1, TestReadmeCommandsRun also runs every unmarked
// block's commands in order, each in its own shell, from a fresh copy of
// the repository's files per block (subtests are named by file and line,
// "examples-mcp-README.md:186"), and fails with the command, its exit
// status and the end of its output.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandTimeout bounds one block of commands.
const commandTimeout = 10 * time.Minute

// shellBlock is one fenced block of commands.
type shellBlock struct {
	file     string
	line     int      // of the opening fence
	notRun   string   // the reason of its "not run" mark, if any
	commands []string // one a command, continuations joined
}

var notRunMark = regexp.MustCompile(`^<!--\s*not run:\s*(.+?)\s*-->$`)

// shellBlocks returns the command blocks of the Markdown text of file.
func shellBlocks(file string, text []byte) ([]shellBlock, error) {
	var out []shellBlock
	var cur *shellBlock
	var lastText string
	var pending string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if cur == nil {
			if info, ok := strings.CutPrefix(line, "```"); ok {
				switch strings.Fields(info + " x")[0] {
				case "sh", "shell", "bash", "console":
					b := shellBlock{file: file, line: n}
					if m := notRunMark.FindStringSubmatch(lastText); m != nil {
						b.notRun = m[1]
					}
					cur = &b
					continue
				}
				// Another fenced block: skip to its end.
				for sc.Scan() {
					n++
					if strings.HasPrefix(strings.TrimSpace(sc.Text()), "```") {
						break
					}
				}
				lastText = ""
				continue
			}
			if line != "" {
				lastText = line
			}
			continue
		}
		if strings.HasPrefix(line, "```") {
			if pending != "" {
				return nil, fmt.Errorf("%s:%d: a command ends in a backslash at the end of its block", file, n)
			}
			out = append(out, *cur)
			cur, lastText = nil, ""
			continue
		}
		cmd := strings.TrimPrefix(line, "$ ")
		if pending != "" {
			cmd = pending + " " + cmd
			pending = ""
		}
		if c, ok := strings.CutSuffix(cmd, `\`); ok {
			pending = strings.TrimSpace(c)
			continue
		}
		if cmd = stripComment(cmd); cmd != "" {
			cur.commands = append(cur.commands, cmd)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: a shell block is not closed", file, cur.line)
	}
	return out, sc.Err()
}

// stripComment drops a trailing "# comment" outside quotes.
func stripComment(cmd string) string {
	var quote rune
	for i, r := range cmd {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || cmd[i-1] == ' ' || cmd[i-1] == '\t'):
			return strings.TrimSpace(cmd[:i])
		}
	}
	return strings.TrimSpace(cmd)
}

// readmes are the READMEs whose commands are checked.
func readmes(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	more, err := filepath.Glob(filepath.Join("examples", "*", "README.md"))
	require.NoError(t, err)
	return append(files, more...)
}

func allBlocks(t *testing.T) []shellBlock {
	t.Helper()
	var all []shellBlock
	for _, f := range readmes(t) {
		text, err := os.ReadFile(f)
		require.NoError(t, err)
		bs, err := shellBlocks(f, text)
		require.NoError(t, err)
		all = append(all, bs...)
	}
	return all
}

// goTarget is the package path a go run/build/test/vet command names.
var goTarget = regexp.MustCompile(`^go (?:run|build|test|vet)\b.*?\s(\./[^\s]*)`)

// TestReadmeCommandsExist: every go command in a README names a package
// directory the repository has, and every ./script exists, whether or
// not its block is run.
func TestReadmeCommandsExist(t *testing.T) {
	blocks := allBlocks(t)
	require.NotEmpty(t, blocks)
	for _, b := range blocks {
		for _, cmd := range b.commands {
			for _, part := range splitCommands(cmd) {
				if m := goTarget.FindStringSubmatch(part); m != nil {
					dir := strings.TrimSuffix(strings.TrimSuffix(m[1], "/..."), "...")
					if dir == "./" || dir == "." {
						continue
					}
					_, err := os.Stat(dir)
					assert.NoError(t, err, "%s:%d: %q names %s", b.file, b.line, cmd, m[1])
				}
				if f := strings.Fields(part); len(f) > 0 && strings.HasPrefix(f[0], "./") {
					_, err := os.Stat(f[0])
					assert.NoError(t, err, "%s:%d: %q runs %s", b.file, b.line, cmd, f[0])
				}
			}
		}
	}
}

// splitCommands splits a line at ; && || and a subshell's parentheses.
func splitCommands(cmd string) []string {
	return regexp.MustCompile(`\s*(?:;|&&|\|\||\(|\))\s*`).Split(cmd, -1)
}

// TestShellBlocks reads marks, continuations, comments and fences.
func TestShellBlocks(t *testing.T) {
	text := "intro\n\n```sh\ngo run ./a   # runs a\n$ go run ./b \\\n  -x 1\n```\n\n" +
		"<!-- not run: starts a server -->\n\n```bash\ngo run ./server\n```\n\n```go\nx := 1 // ```sh\n```\n" +
		"```console\necho '# not a comment' # a comment\n```\n"
	bs, err := shellBlocks("T.md", []byte(text))
	require.NoError(t, err)
	require.Len(t, bs, 3)
	assert.Equal(t, []string{"go run ./a", "go run ./b -x 1"}, bs[0].commands)
	assert.Empty(t, bs[0].notRun)
	assert.Equal(t, "starts a server", bs[1].notRun)
	assert.Equal(t, []string{"go run ./server"}, bs[1].commands)
	assert.Equal(t, []string{"echo '# not a comment'"}, bs[2].commands)
	assert.Empty(t, bs[2].notRun, "a mark counts only right before its block")

	_, err = shellBlocks("T.md", []byte("```sh\ngo run ./a \\\n```\n"))
	assert.ErrorContains(t, err, "T.md:3")
	_, err = shellBlocks("T.md", []byte("```sh\ngo run ./a\n"))
	assert.ErrorContains(t, err, "T.md:1")
}

// TestReadmeCommandsRun runs every unmarked block's commands, in order,
// from a fresh copy of the repository's files; set ASU_README_COMMANDS=1.
func TestReadmeCommandsRun(t *testing.T) {
	if os.Getenv("ASU_README_COMMANDS") != "1" {
		t.Skip("set ASU_README_COMMANDS=1 to run the READMEs' commands (they build and run the examples)")
	}
	blocks := allBlocks(t)
	for _, b := range blocks {
		if b.notRun != "" {
			continue
		}
		name := strings.ReplaceAll(filepath.ToSlash(b.file), "/", "-")
		t.Run(fmt.Sprintf("%s:%d", name, b.line), func(t *testing.T) {
			dir := freshCopy(t)
			ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
			defer cancel()
			out, err := runBlock(ctx, dir, b.commands)
			if err != nil {
				t.Fatalf("%s:%d: %v\n%s", b.file, b.line, err, out)
			}
		})
	}
}

// runMarker starts the line a block's script prints before each command.
const runMarker = "\x1easu-readme-command "

// runBlock runs commands in order in one shell from dir, so that what one
// sets (a variable, a directory) holds for the next, stopping at the
// first that fails. The error names that command; out is the end of the
// output.
func runBlock(ctx context.Context, dir string, commands []string) (out []byte, err error) {
	var script strings.Builder
	script.WriteString("set -e\n")
	for i, c := range commands {
		fmt.Fprintf(&script, "printf '%s%d\\n'\n%s\n", runMarker, i, c)
	}
	sh := exec.CommandContext(ctx, "sh", "-c", script.String())
	sh.Dir = dir
	sh.WaitDelay = time.Second
	out, err = sh.CombinedOutput()
	if err == nil {
		return nil, nil
	}
	failed := -1
	for _, l := range strings.Split(string(out), "\n") {
		if n, ok := strings.CutPrefix(l, runMarker); ok {
			_, _ = fmt.Sscan(n, &failed)
		}
	}
	if len(out) > 4000 {
		out = out[len(out)-4000:]
	}
	if failed < 0 || failed >= len(commands) {
		return out, fmt.Errorf("the block failed before its first command: %w", err)
	}
	return out, fmt.Errorf("command %q failed: %w", commands[failed], err)
}

// TestRunBlockNamesTheFailingCommand: variables carry from one command
// to the next, and a failure names the command that failed, not its
// neighbours.
func TestRunBlockNamesTheFailingCommand(t *testing.T) {
	ctx := context.Background()
	_, err := runBlock(ctx, t.TempDir(), []string{"X=1", `test "$X" = 1`, "cd /"})
	require.NoError(t, err)
	_, err = runBlock(ctx, t.TempDir(), []string{"true", "go run ./examples/nowhere", "true"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `command "go run ./examples/nowhere" failed`)
	_, err = runBlock(ctx, t.TempDir(), []string{"false"})
	assert.Contains(t, err.Error(), `command "false" failed`)
}

// freshCopy copies the repository's files (tracked and untracked, not
// ignored) into a temporary directory, as a fresh clone has them.
func freshCopy(t *testing.T) string {
	t.Helper()
	list, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("no git work tree to copy: %v", err)
	}
	dst := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		if err := copyFile(f, filepath.Join(dst, f)); err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree
			}
			require.NoError(t, err)
		}
	}
	return dst
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil || fi.IsDir() {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// mountRegion is the part of Example_mount the README shows.
var mountRegion = regexp.MustCompile(`(?s)\n\t// README: begin mount\n(.*?)\t// README: end mount\n`)

// TestReadmeMountIsTheExample: the Go block of the README's "How to mount
// it" is the compiled, tested body of Example_mount between its README
// markers, one tab less indented.
func TestReadmeMountIsTheExample(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("stepup", "example_mount_test.go"))
	require.NoError(t, err)
	m := mountRegion.FindSubmatch(src)
	require.NotNil(t, m, "the README markers in Example_mount")
	var want strings.Builder
	for _, l := range strings.SplitAfter(string(m[1]), "\n") {
		want.WriteString(strings.TrimPrefix(l, "\t"))
	}

	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## How to mount it\n")
	require.True(t, ok, "the README has a How to mount it section")
	section, _, _ = strings.Cut(section, "\n## ")
	_, code, ok := strings.Cut(section, "\n```go\n")
	require.True(t, ok, "the section has a Go block")
	code, _, ok = strings.Cut(code, "\n```\n")
	require.True(t, ok)
	assert.Equal(t, want.String(), code+"\n", "README.md's mount block is Example_mount's region; copy it over")
}

// FuzzShellBlocks: any Markdown gives blocks or an error naming the file
// and line, never a panic, and every command is one line.
func FuzzShellBlocks(f *testing.F) {
	f.Add("```sh\ngo run ./a \\\n -x\n```\n")
	f.Add("<!-- not run: x -->\n```bash\n$ echo '#'\n```\n```go\n```")
	f.Fuzz(func(t *testing.T, s string) {
		bs, err := shellBlocks("F.md", []byte(s))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "F.md:") && !strings.Contains(err.Error(), "token too long") {
				t.Fatalf("error without its place: %v", err)
			}
			return
		}
		for _, b := range bs {
			for _, c := range b.commands {
				if strings.Contains(c, "\n") {
					t.Fatalf("command %q spans lines", c)
				}
			}
		}
	})
}
