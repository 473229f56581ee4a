package metrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// checkNoLeak fails when goroutines started by the test outlive it (the
// same settle loop as pipeline's engine tests).
func checkNoLeak(t *testing.T, before int) {
	t.Helper()
	http.DefaultClient.CloseIdleConnections()
	for i := 0; i < 500; i++ {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	t.Fatalf("%d goroutines left running (had %d before):\n%s", runtime.NumGoroutine(), before, buf[:n])
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// /healthz answers 200 whatever readiness says; /readyz follows ready, with
// its error text in the 503.
func TestHealthAndReadiness(t *testing.T) {
	var notReady atomic.Pointer[error]
	errNo := errors.New("no partitions assigned yet (group mcptrace, generation 0)")
	notReady.Store(&errNo)
	ready := func() error {
		if p := notReady.Load(); p != nil {
			return *p
		}
		return nil
	}
	s := serve(t, New(), ready)
	base := "http://" + s.Addr()

	if code, body := get(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz not ready: %d %q", code, body)
	}
	code, body := get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, errNo.Error()) {
		t.Errorf("/readyz not ready: %d %q, want 503 with %q", code, body, errNo)
	}

	notReady.Store(nil)
	if code, body := get(t, base+"/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz ready: %d %q", code, body)
	}
	if code, _ := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz ready: %d", code)
	}

	// And back: readiness is asked on every request, not cached.
	notReady.Store(&errNo)
	if code, _ := get(t, base+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz after losing readiness: %d", code)
	}

	if code, _ := get(t, base+"/nothing"); code != http.StatusNotFound {
		t.Errorf("/nothing: %d, want 404", code)
	}
	resp, err := http.Post(base+"/metrics", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", resp.StatusCode)
	}
}

// A nil ready function means always ready.
func TestNilReadyIsReady(t *testing.T) {
	s := serve(t, New(), nil)
	if code, _ := get(t, "http://"+s.Addr()+"/readyz"); code != 200 {
		t.Errorf("/readyz with nil ready: %d", code)
	}
}

// A listen error comes back from Serve at once, names the address, and
// leaves no goroutine behind.
func TestServeListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	before := runtime.NumGoroutine()
	addr := ln.Addr().String()
	s, err := Serve(context.Background(), addr, New(), nil)
	if err == nil {
		_ = s.Shutdown(context.Background())
		t.Fatalf("Serve on %s, which is taken: no error", addr)
	}
	if !strings.Contains(err.Error(), addr) {
		t.Errorf("error %q does not name %s", err, addr)
	}
	if _, err := Serve(context.Background(), "no-such-host-or-port", New(), nil); err == nil ||
		!strings.Contains(err.Error(), "no-such-host-or-port") {
		t.Errorf("Serve on a bad address: %v", err)
	}
	checkNoLeak(t, before)
}

// Shutdown joins the server's goroutines, also after scrapes over kept-alive
// connections, and a second call returns the same result.
func TestShutdownJoins(t *testing.T) {
	before := runtime.NumGoroutine()
	m := New()
	s, err := Serve(context.Background(), "127.0.0.1:0", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := Scrape(context.Background(), "http://"+s.Addr()+"/metrics"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if _, err := http.Get("http://" + s.Addr() + "/healthz"); err == nil {
		t.Error("/healthz answered after Shutdown")
	}
	checkNoLeak(t, before)
}

// When Serve's context is done the server closes by itself; Shutdown still
// joins and reports no error.
func TestServeContextDone(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Serve(ctx, "127.0.0.1:0", New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, "http://"+s.Addr()+"/healthz"); code != 200 {
		t.Fatalf("/healthz: %d", code)
	}
	cancel()
	select {
	case <-s.served: // closed by the watcher, not by Shutdown
	case <-time.After(time.Minute): // a hang guard, not a speed check
		t.Fatal("the server still serves a minute after its context was cancelled")
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown after cancel: %v", err)
	}
	checkNoLeak(t, before)
}

// A drain cut short by Shutdown's context closes the connections, reports
// the deadline, and still waits for the handler that was running (a slow
// ready function) before it returns.
func TestShutdownDeadline(t *testing.T) {
	before := runtime.NumGoroutine()
	entered := make(chan struct{})
	release := make(chan struct{})
	var returned atomic.Bool
	ready := func() error {
		close(entered)
		<-release
		returned.Store(true)
		return nil
	}
	s, err := Serve(context.Background(), "127.0.0.1:0", New(), ready)
	if err != nil {
		t.Fatal(err)
	}
	clientDone := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + s.Addr() + "/readyz")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		clientDone <- err
	}()
	<-entered

	expired, cancel := context.WithCancel(context.Background())
	cancel()
	shutdownDone := make(chan error, 1)
	go func() { shutdownDone <- s.Shutdown(expired) }()

	// The connection is closed under the blocked handler...
	if err := <-clientDone; err == nil {
		t.Error("the request in flight got an answer, want its connection closed")
	}
	// ...and Shutdown waits for the handler to return.
	select {
	case err := <-shutdownDone:
		t.Fatalf("Shutdown returned (%v) while a handler was still running", err)
	default:
	}
	close(release)
	err = <-shutdownDone
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), s.Addr()) {
		t.Errorf("Shutdown with a done context: %v, want context.Canceled naming %s", err, s.Addr())
	}
	if !returned.Load() {
		t.Error("Shutdown returned before the handler did")
	}
	checkNoLeak(t, before)
}
