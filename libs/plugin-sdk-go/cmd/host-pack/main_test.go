package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestACommandLineThatIsNotValidIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"-bogus"}, {"some-folder"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Fatalf("%v: exit %d", args, code)
		}
		if !strings.Contains(stderr.String(), "error PACK_USAGE: ") || !strings.Contains(stderr.String(), "fix: ") {
			t.Fatalf("%v: stderr %q", args, stderr.String())
		}
	}
}

func TestARefusalPrintsItsCodeAndFix(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-dir", t.TempDir()}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stderr.String(), "error PACK_MANIFEST_MISSING: ") {
		t.Fatalf("stderr %q", stderr.String())
	}
}
