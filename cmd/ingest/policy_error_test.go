package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A bad -redact-policy file is reported by the real binary with its line and
// field, exit status 2, and without anything the file holds: a secret pasted
// into it never reaches stderr.
func TestBadPolicyFileNotEchoed(t *testing.T) {
	bin := ingestBinary(t)
	dir := t.TempDir()
	const secret = "ghp_PolicyCanary0123456789abcdefABCDEF"
	for name, text := range map[string]string{
		"action":   "fields:\n  exchanges.session_id: keep\n  exchanges.error_message: " + secret + "\n",
		"field":    "fields:\n  exchanges.reason: keep\n  " + secret + ": keep\n",
		"not yaml": "fields:\n  exchanges.reason: keep\n  exchanges.error_message: \"" + secret + "\n  [\n",
	} {
		policy := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(policy, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "-redact-policy", policy, "-out", filepath.Join(dir, "out"), filepath.Join("..", "..", "samples"))
		cmd.Stderr = &stderr
		cmd.Stdout = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("%s: %v, want exit status 2\n%s", name, err, stderr.String())
		}
		out := stderr.String()
		for _, frag := range []string{secret, secret[4:16], secret[len(secret)-12:]} {
			if strings.Contains(out, frag) {
				t.Errorf("%s: stderr quotes the policy file:\n%s", name, out)
			}
		}
		if !strings.Contains(out, "line 3") || !strings.Contains(out, "policy.yaml") {
			t.Errorf("%s: stderr does not name the file and line 3:\n%s", name, out)
		}
		if name == "action" && !strings.Contains(out, "exchanges.error_message") {
			t.Errorf("%s: stderr does not name the field:\n%s", name, out)
		}
	}
}
