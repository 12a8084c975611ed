package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServiceFlagsRefuseBadInput: the service's flags refuse what cannot
// work, naming the flag, and a secret file's error names the file and
// line.
func TestServiceFlagsRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.secret")
	require.NoError(t, os.WriteFile(short, []byte("  abc \n"), 0o600))
	good := filepath.Join(dir, "good.secret")
	require.NoError(t, os.WriteFile(good, bytes.Repeat([]byte("g"), 40), 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-tool-url", "issue_refund"}, `-tool-url "issue_refund": want TOOL=URL`},
		{[]string{"-tool-url", "=http://x"}, "want TOOL=URL"},
		{[]string{"-tool-url", "drop_tables=http://127.0.0.1:1/x", "-tool-secret-file", good}, "-tool-url drop_tables: the catalog has no such tool"},
		{[]string{"-tool-url", "issue_refund=http://127.0.0.1:1/a", "-tool-url", "issue_refund=http://127.0.0.1:1/b", "-tool-secret-file", good}, "the tool has two URLs"},
		{[]string{"-tool-url", "issue_refund=http://127.0.0.1:1/a"}, "give -tool-secret-file FILE"},
		{[]string{"-tool-url", "issue_refund=ftp://x", "-tool-secret-file", good}, "http or https"},
		{[]string{"-tool-url", "issue_refund=http://127.0.0.1:1/a", "-tool-secret-file", short}, short + ": line 1: the secret is 3 bytes"},
		{[]string{"-tool-url", "issue_refund=http://127.0.0.1:1/a", "-tool-retries", "99", "-tool-secret-file", good}, "retries must be at most"},
		{[]string{"-webhook", "http://127.0.0.1:1/hook"}, "-webhook: give -webhook-secret-file FILE too"},
		{[]string{"-webhook-secret-file", good}, "-webhook-secret-file: give -webhook URL too"},
		{[]string{"-webhook", "http://127.0.0.1:1/hook", "-webhook-secret-file", filepath.Join(dir, "none")}, "none: no such file"},
		{[]string{"-webhook", "http://127.0.0.1:1/hook", "-webhook-secret-file", short}, "line 1: the secret is 3 bytes"},
		{[]string{"-webhook", "mailto:x@example.com", "-webhook-secret-file", good}, "-webhook: "},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"-agent-addr", "127.0.0.1:0", "-site-addr", "127.0.0.1:0", "-approver", ""}, tc.args...)
			err := cli(t.Context(), args, &bytes.Buffer{}, &bytes.Buffer{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestToolSecretFileIsCreatedOnce: a missing -tool-secret-file is created
// with 64 hex digits, mode 0600, and read as is after that.
func TestToolSecretFileIsCreatedOnce(t *testing.T) {
	f := filepath.Join(t.TempDir(), "tool.secret")
	s, err := secretFile(f, true)
	require.NoError(t, err)
	assert.Len(t, s, 64)
	fi, err := os.Stat(f)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	again, err := secretFile(f, true)
	require.NoError(t, err)
	assert.Equal(t, s, again)
	_, err = secretFile(filepath.Join(t.TempDir(), "none"), false)
	require.Error(t, err, "only the tools' secret is ever created")
}

// TestServiceFlagsParse: the service's flags reach the options run uses.
func TestServiceFlagsParse(t *testing.T) {
	var o options
	fs := flags(&o, &bytes.Buffer{})
	require.NoError(t, fs.Parse([]string{"-tool-url", "issue_refund=http://127.0.0.1:8790/issue_refund",
		"-tool-url", "send_email=https://mail.internal/asu", "-tool-secret-file", "tool.secret", "-tool-timeout", "3s",
		"-tool-retries", "4", "-webhook", "https://chat.example.com/hook", "-webhook-secret-file", "hook.secret",
		"-operator-token-file", "op.token", "-dwell", "7s"}))
	assert.Equal(t, multiFlag{"issue_refund=http://127.0.0.1:8790/issue_refund", "send_email=https://mail.internal/asu"}, o.svc.toolURLs)
	assert.Equal(t, "tool.secret", o.svc.toolSecretFile)
	assert.Equal(t, "https://chat.example.com/hook", o.svc.webhook)
	assert.Equal(t, "hook.secret", o.svc.webhookSecretFile)
	assert.Equal(t, "op.token", o.svc.operatorTokenFile)
	require.NoError(t, o.svc.resolve([]string{"issue_refund", "send_email"}))
	require.Len(t, o.svc.httpTools, 2)
	assert.Equal(t, HTTPTool{Tool: "issue_refund", URL: "http://127.0.0.1:8790/issue_refund", Timeout: 3e9, Retries: 4}, o.svc.httpTools[0])
	assert.Equal(t, int64(7e9), int64(o.dwell))
}
