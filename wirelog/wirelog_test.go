package wirelog_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"mcptrace/schema"
	"mcptrace/wirelog"
)

// lineSink collects what Handler writes: every Write call separately, so a
// test can tell that each one is exactly one whole line, and a signal per
// line for tests that wait for a transaction's record.
type lineSink struct {
	mu     sync.Mutex
	writes [][]byte
	lines  chan struct{}
}

func newSink() *lineSink { return &lineSink{lines: make(chan struct{}, 1000)} }

func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.writes = append(s.writes, append([]byte(nil), p...))
	s.mu.Unlock()
	s.lines <- struct{}{}
	return len(p), nil
}

// wait blocks until n more lines were written.
func (s *lineSink) wait(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-s.lines:
		case <-time.After(10 * time.Second):
			t.Fatalf("no record written after %d of %d", i, n)
		}
	}
}

func (s *lineSink) records(t *testing.T) []schema.WireRecord {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []schema.WireRecord
	for i, w := range s.writes {
		if bytes.Count(w, []byte("\n")) != 1 || w[len(w)-1] != '\n' {
			t.Fatalf("write %d is not exactly one line: %q", i, w)
		}
		dec := json.NewDecoder(bytes.NewReader(w))
		dec.DisallowUnknownFields()
		var r schema.WireRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("write %d: %v: %s", i, err, w)
		}
		out = append(out, r)
	}
	return out
}

func post(t *testing.T, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestJSONTransaction(t *testing.T) {
	sink := newSink()
	const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	const callBody = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	var got []string
	var mu sync.Mutex
	h := wirelog.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Mcp-Session-Id") == "" {
			w.Header().Set("Mcp-Session-Id", "sess-abc")
			w.Header().Add("Set-Cookie", "a=1")
			w.Header().Add("Set-Cookie", "b=2")
		}
		w.Header().Add("X-Multi", "one")
		w.Header().Add("X-Multi", "two")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}), sink, &wirelog.Options{Server: &wirelog.Implementation{Name: "srv", Version: "0.1"}, Scenario: "s1", Labels: map[string]string{"env": "test"},
		Connection: func(r *http.Request) string { return "tenant-7" }})
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp := post(t, srv.URL+"/mcp?x=1", initBody, map[string]string{"Authorization": "Bearer sk-live-secret", "Cookie": "c=3"})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != `{"jsonrpc":"2.0","id":1,"result":{}}` || resp.Header.Get("Mcp-Session-Id") != "sess-abc" {
		t.Fatalf("the client got %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp = post(t, srv.URL+"/mcp", callBody, map[string]string{"Mcp-Session-Id": "sess-abc", "MCP-Protocol-Version": "2025-11-25"})
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sink.wait(t, 2)
	if got[0] != initBody || got[1] != callBody {
		t.Fatalf("the handler read %q", got)
	}

	recs := sink.records(t)
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Format != "wire/1" || r.Side != "server" || r.Transport != "streamable-http" || r.Scenario != "s1" || r.Labels["env"] != "test" ||
		r.Server == nil || r.Server.Name != "srv" || r.Connection != "tenant-7" {
		t.Errorf("record 1 identity: %+v", r)
	}
	if r.SessionID != "sess-abc" || r.ProtocolVersion != "" {
		t.Errorf("initialize: session %q (want the one the response assigned), version %q", r.SessionID, r.ProtocolVersion)
	}
	q := r.HTTP.Request
	if q.Method != "POST" || q.URL != srv.URL+"/mcp?x=1" || q.Body == nil || *q.Body != initBody {
		t.Errorf("request: %+v", q)
	}
	if q.Headers["Authorization"] != wirelog.Dropped || q.Headers["Cookie"] != wirelog.Dropped || q.Headers["Content-Type"] != "application/json" {
		t.Errorf("request headers: %v", q.Headers)
	}
	s := r.HTTP.Response
	if s == nil || s.Status != 200 || s.ContentType != "application/json" || s.Body == nil || *s.Body != `{"jsonrpc":"2.0","id":1,"result":{}}` || s.StreamEnd != "" {
		t.Fatalf("response: %+v", s)
	}
	if s.Headers["Set-Cookie"] != wirelog.Dropped || fmt.Sprint(s.Headers["X-Multi"]) != "[one two]" || s.Headers["Mcp-Session-Id"] != "sess-abc" {
		t.Errorf("response headers: %v", s.Headers)
	}
	for _, ts := range []string{r.Time, r.EndTime} {
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", ts); err != nil {
			t.Errorf("time %q is not UTC with milliseconds: %v", ts, err)
		}
	}
	if r.EndTime < r.Time {
		t.Errorf("end_ts %s before ts %s", r.EndTime, r.Time)
	}
	if r2 := recs[1]; r2.SessionID != "sess-abc" || r2.ProtocolVersion != "2025-11-25" || *r2.HTTP.Request.Body != callBody {
		t.Errorf("record 2: session %q version %q", r2.SessionID, r2.ProtocolVersion)
	}
}

// TestStreamsAsWritten checks that events reach the client while the handler
// still runs (the wrapper flushes through), and that the record holds the
// stream as sent.
func TestStreamsAsWritten(t *testing.T) {
	sink := newSink()
	firstSeen := make(chan struct{})
	h := wirelog.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the wrapper is not an http.Flusher")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-firstSeen: // the client read the first event before the second exists
		case <-time.After(10 * time.Second):
			t.Error("the first event did not reach the client while the handler ran")
		}
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\n\n")
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("ResponseController.Flush through the wrapper: %v", err)
		}
	}), sink, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp := post(t, srv.URL, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}`, nil)
	br := bufio.NewReader(resp.Body)
	var got strings.Builder
	for {
		line, err := br.ReadString('\n')
		got.WriteString(line)
		if line == "\n" && !strings.Contains(got.String(), `"id":3`) {
			close(firstSeen)
		}
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	sink.wait(t, 1)
	rec := sink.records(t)[0]
	s := rec.HTTP.Response
	if s.ContentType != "text/event-stream" || s.StreamEnd != "complete" || s.Body == nil || *s.Body != got.String() {
		t.Fatalf("response %+v, client saw %q", s, got.String())
	}
}

func TestClientClosedStream(t *testing.T) {
	sink := newSink()
	blocked := make(chan struct{})
	h := wirelog.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": ping\n\n")
		w.(http.Flusher).Flush()
		close(blocked)
		<-r.Context().Done() // the way SDK servers hang a stream
	}), sink, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-blocked
	cancel()
	resp.Body.Close()
	sink.wait(t, 1)
	s := sink.records(t)[0].HTTP.Response
	if s.StreamEnd != "client_closed" || *s.Body != ": ping\n\n" {
		t.Fatalf("response %+v", s)
	}
}

func TestBodyLimit(t *testing.T) {
	sink := newSink()
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"blob":"` + strings.Repeat("a", 300) + `"}}}`
	var read int
	h := wirelog.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		read = len(b)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/big" {
			io.WriteString(w, strings.Repeat(" ", 150))
			io.WriteString(w, strings.Repeat(" ", 150))
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}), sink, &wirelog.Options{MaxBody: 200})
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, path := range []string{"/", "/big"} {
		resp := post(t, srv.URL+path, big, nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if read != len(big) || !strings.HasSuffix(string(b), `{"jsonrpc":"2.0","id":1,"result":{}}`) {
			t.Fatalf("%s: the handler read %d of %d bytes; the client got %d bytes", path, read, len(big), len(b))
		}
	}
	sink.wait(t, 2)
	recs := sink.records(t)
	for i, r := range recs {
		if r.HTTP.Request.Body != nil || r.Labels[wirelog.LabelRequestBodyCut] != fmt.Sprint(len(big)) {
			t.Errorf("record %d: request body %v, labels %v", i, r.HTTP.Request.Body != nil, r.Labels)
		}
	}
	if b := recs[0].HTTP.Response.Body; b == nil || *b != `{"jsonrpc":"2.0","id":1,"result":{}}` || recs[0].Labels[wirelog.LabelResponseBodyCut] != "" {
		t.Errorf("a small response is kept whole: %v %v", b, recs[0].Labels)
	}
	if recs[1].HTTP.Response.Body != nil || recs[1].Labels[wirelog.LabelResponseBodyCut] != fmt.Sprint(300+36) {
		t.Errorf("a response over the limit is left out and labelled: %v", recs[1].Labels)
	}
}

func TestDropHeadersOption(t *testing.T) {
	sink := newSink()
	h := wirelog.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), sink, &wirelog.Options{DropHeaders: []string{"x-api-key"}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp := post(t, srv.URL, `{}`, map[string]string{"X-Api-Key": "k-123", "Authorization": "Bearer kept-on-purpose"})
	resp.Body.Close()
	sink.wait(t, 1)
	r := sink.records(t)[0]
	if r.Connection != "" {
		t.Errorf("connection %q without Options.Connection", r.Connection)
	}
	if r.HTTP.Request.Headers["X-Api-Key"] != wirelog.Dropped || r.HTTP.Request.Headers["Authorization"] != "Bearer kept-on-purpose" {
		t.Fatalf("headers %v", r.HTTP.Request.Headers)
	}
	// A handler that writes nothing: net/http's 200 with an empty body.
	if s := r.HTTP.Response; s == nil || s.Status != 200 || s.Body == nil || *s.Body != "" {
		t.Fatalf("response %+v", s)
	}
}

func TestConcurrentRequestsOneLineEach(t *testing.T) {
	sink := newSink()
	h := wirelog.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 5; i++ {
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
	}), sink, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	const n = 40
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(fmt.Sprintf(`{"id":%d}`, i)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}(i)
	}
	wg.Wait()
	sink.wait(t, n)
	seen := map[string]bool{}
	for _, r := range sink.records(t) {
		b := *r.HTTP.Request.Body
		if want := strings.Repeat("data: "+b+"\n\n", 5); *r.HTTP.Response.Body != want {
			t.Errorf("request %s: response body %q", b, *r.HTTP.Response.Body)
		}
		seen[b] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct requests recorded, want %d", len(seen), n)
	}
}

func TestHandlerAbort(t *testing.T) {
	sink := newSink()
	h := wirelog.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/late" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {}\n\n")
			w.(http.Flusher).Flush()
		}
		panic(http.ErrAbortHandler)
	}), sink, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, path := range []string{"/early", "/late"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(`{}`))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err == nil {
			t.Errorf("%s: the client saw no failure: the panic did not reach net/http", path)
		}
	}
	sink.wait(t, 2)
	recs := sink.records(t)
	byPath := map[string]schema.WireRecord{}
	for _, r := range recs {
		byPath[r.HTTP.Request.URL[len(srv.URL):]] = r
	}
	if f := byPath["/early"].HTTP.Failure; f == nil || f.Kind != "reset" || byPath["/early"].HTTP.Response != nil {
		t.Errorf("abort before the status: %+v", byPath["/early"].HTTP)
	}
	if s := byPath["/late"].HTTP.Response; s == nil || s.StreamEnd != "reset" || *s.Body != "data: {}\n\n" {
		t.Errorf("abort mid-stream: %+v", s)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) { f.n++; return 0, errors.New("disk full") }

func TestLogErrorsDoNotBreakResponses(t *testing.T) {
	var errs []error
	var mu sync.Mutex
	h := wirelog.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		&failWriter{}, &wirelog.Options{OnError: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://example.test/mcp", nil))
	if rec.Body.String() != "ok" || rec.Code != 200 {
		t.Fatalf("response %d %q", rec.Code, rec.Body.String())
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "disk full") || !strings.Contains(errs[0].Error(), "GET http://example.test/mcp") {
		t.Fatalf("errors %v", errs)
	}
}

// A handler that gives up silently when its client goes away sent nothing:
// the record is a client_abort failure, not net/http's implicit 200.
func TestClientGoneBeforeResponse(t *testing.T) {
	sink := newSink()
	started := make(chan struct{})
	h := wirelog.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}), sink, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))
	go func() { <-started; cancel() }()
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the request succeeded")
	}
	sink.wait(t, 1)
	r := sink.records(t)[0]
	if f := r.HTTP.Failure; f == nil || f.Kind != "client_abort" || r.HTTP.Response != nil || r.HTTP.Request.Body == nil {
		t.Fatalf("record %+v", r.HTTP)
	}
}

// TestStandardLibraryOnly: users add this middleware to their servers; it
// must bring no module with it (mcptrace/schema is standard-library only
// too).
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "mcptrace/wirelog").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps gave %q", out)
	}
	for _, d := range deps {
		first := strings.SplitN(d, "/", 2)[0]
		if strings.Contains(first, ".") || (first == "mcptrace" && d != "mcptrace/wirelog" && d != "mcptrace/schema") {
			t.Errorf("wirelog depends on %s", d)
		}
	}
}
