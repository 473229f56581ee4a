package interop

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSDKsStayOutOfBinaries checks that no command links an MCP SDK: they
// are test dependencies of this package only, and its one non-test file
// imports nothing.
func TestSDKsStayOutOfBinaries(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "mcptrace/cmd/ingest", "mcptrace/cmd/analyze", "mcptrace/interop").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps gave %d packages: %s", len(deps), out)
	}
	for _, d := range deps {
		for _, sdk := range []string{"github.com/modelcontextprotocol/go-sdk", "github.com/mark3labs/mcp-go"} {
			if strings.HasPrefix(d, sdk) {
				t.Errorf("%s is linked into a binary (or the interop package's non-test code)", d)
			}
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		if f != "doc.go" {
			t.Errorf("%s: the interop package's only non-test file is doc.go", f)
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		if len(parsed.Imports) > 0 {
			t.Errorf("%s imports %d packages", f, len(parsed.Imports))
		}
	}
}
