package redact

import (
	"strings"
	"testing"
)

// The excerpt of a file that matched no format: dropped for credentials
// files (by name or by shape), masked line by line otherwise.
func TestFileExcerpt(t *testing.T) {
	const pw = "Zx9!qLm2#vRw"
	files := map[string]string{
		".pgpass":             "db.example.com:5432:app:report:" + pw + "\n*:*:*:postgres:" + pw + "\n",
		"home/ana/.netrc":     "machine api.example.com\n  login ana\n  password " + pw + "\n",
		`C:\Users\ana\_netrc`: "machine h login u password " + pw + "\n",
		"aws/credentials":     "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = " + pw + "\n",
		"app/.env":            "DATABASE_URL=postgres://app:" + pw + "@db/app\nDEBUG=1\n",
		"app/.env.local":      "API_SECRET=" + pw + "\n",
		"x/.git-credentials":  "https://ana:" + pw + "@github.com\n",
		// Shapes, whatever the name.
		"dump/users.txt":   "ana@example.com:" + pw + "\nbob@example.org:" + pw + "x\ncarl@example.net:" + pw + "y\n",
		"dump/pairs.tsv":   "ana\t" + pw + "\nbob\t" + pw + "x\n",
		"conf/pg.txt":      "# hosts\nlocalhost:5432:*:app:" + pw + "\n",
		"backup/netrc.bak": "machine a.example login u password " + pw + "\nmachine b.example login v password " + pw + "\n",
		"notes/settings":   "export TOKEN=" + pw + "\nexport USER=ana\n",
	}
	for name, text := range files {
		var st Stats
		got := FileExcerpt(name, []byte(text), 480, &st)
		if got != DroppedExcerpt {
			t.Errorf("%s: excerpt %q, want it dropped", name, got)
		}
		if st.Counts()["credentials_file"] != 1 {
			t.Errorf("%s: counts %v", name, st.Counts())
		}
	}
	// A file that is not a credentials file, with a credential line or
	// two inside: those lines are masked, the rest kept.
	text := "mcptrace export v2\nstatus: ok\nana\t" + pw + "\nsee db.internal:5432:app:ro:" + pw + " for details\nthe end of a long file that says nothing\nline 6\nline 7\n"
	var st Stats
	got := FileExcerpt("data/report.txt", []byte(text), 480, &st)
	if strings.Contains(got, pw) || strings.Contains(got, pw[:6]) || !strings.Contains(got, "mcptrace export v2") || !strings.Contains(got, "status: ok") {
		t.Errorf("masked excerpt: %q", got)
	}
	if st.Counts()["credentials_file"] != 2 {
		t.Errorf("counts %v", st.Counts())
	}
	// Ordinary files are excerpted as before.
	for _, s := range []string{"<html><body>not a log</body></html>", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "col_a,col_b\n1,2\n3,4\n",
		"2024-11-05 12:00:01 INFO server started on :8080\n2024-11-05 12:00:02 WARN slow request /mcp 2300 ms\n"} {
		if got, want := FileExcerpt("x/data.bin", []byte(s), 160, nil), Excerpt([]byte(s), 160); got != want {
			t.Errorf("FileExcerpt(%q) = %q, want %q", s, got, want)
		}
	}
}
