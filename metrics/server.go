package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server is the HTTP server of -metrics-addr: /metrics, /healthz and
// /readyz. Make one with Serve and end it with Shutdown.
type Server struct {
	srv  *http.Server
	addr net.Addr

	served    chan struct{} // closed when srv.Serve has returned
	serveErr  error         // what srv.Serve returned, other than ErrServerClosed
	stopWatch chan struct{} // closed by Shutdown to end the context watcher
	watched   chan struct{} // closed when the context watcher has returned

	mu       sync.Mutex
	closing  bool           // set by Shutdown once the listener is closed
	inflight sync.WaitGroup // handlers running; Add only under mu while !closing

	once        sync.Once
	shutdownErr error
}

// Serve listens on addr (host:port; port 0 picks a free one, see Addr) and
// serves, until Shutdown or until ctx is done:
//
//   - /metrics: m's registry in the Prometheus exposition formats;
//   - /healthz: 200 while the process runs;
//   - /readyz: 200 when ready returns nil, 503 with ready's error text
//     otherwise. A nil ready is always ready. ready is called once per
//     request, from the request's goroutine: it must be quick and safe for
//     concurrent use.
//
// A listen error is returned at once and names the address. When ctx is done
// the server closes at once (in-flight requests are cut); pass a context
// that outlives the drain if scrapes should go on during shutdown, and call
// Shutdown in every case: it joins the server's goroutines.
func Serve(ctx context.Context, addr string, m *Metrics, ready func() error) (*Server, error) {
	if m == nil {
		return nil, fmt.Errorf("metrics: serve on %q: no metrics (make them with metrics.New)", addr)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %q: %w (choose a free host:port for -metrics-addr)", addr, err)
	}

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(m.reg,
		promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
			Registry:            m.reg, // counts its own errors in promhttp_metric_handler_errors_total
			MaxRequestsInFlight: 4,
			Timeout:             30 * time.Second,
		})))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ready != nil {
			if err := ready(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = fmt.Fprintf(w, "not ready: %v\n", err)
				return
			}
		}
		_, _ = w.Write([]byte("ready\n"))
	})

	s := &Server{
		srv: &http.Server{
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       2 * time.Minute,
			BaseContext:       func(net.Listener) context.Context { return ctx },
		},
		addr:      ln.Addr(),
		served:    make(chan struct{}),
		stopWatch: make(chan struct{}),
		watched:   make(chan struct{}),
	}
	s.srv.Handler = s.track(mux)
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.serveErr = fmt.Errorf("metrics: serve on %s: %w", s.addr, err)
		}
	}()
	go func() {
		defer close(s.watched)
		select {
		case <-ctx.Done():
			_ = s.srv.Close()
		case <-s.stopWatch:
		}
	}()
	return s, nil
}

// Addr returns the address the server listens on, with the port the system
// picked for ":0" (for example "127.0.0.1:41237").
func (s *Server) Addr() string {
	return s.addr.String()
}

// Shutdown stops accepting connections and waits, until ctx is done, for
// in-flight requests to finish; past that it closes the connections that
// are left. It returns once every goroutine of the server has ended, with
// ctx's error if the drain was cut short and the serving error if serving
// had failed. It also waits for handlers still running after the
// connections were closed: a ready function that never returns blocks it.
// Calling it again returns the same result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.once.Do(func() {
		close(s.stopWatch)
		<-s.watched
		err := s.srv.Shutdown(ctx)
		if err != nil {
			_ = s.srv.Close()
			err = fmt.Errorf("metrics: shutdown of %s: %w (open connections were closed)", s.addr, err)
		}
		<-s.served
		// No handler starts after this; wait for those still running
		// (a slow ready function) so none outlives the server.
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.inflight.Wait()
		s.shutdownErr = errors.Join(s.serveErr, err)
	})
	return s.shutdownErr
}

// track counts the handlers in flight, so Shutdown can wait for them after
// the connections are closed (net/http's Close does not wait for handlers).
// A request that races the end of Shutdown is answered 503 unserved.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			http.Error(w, "metrics server shutting down", http.StatusServiceUnavailable)
			return
		}
		s.inflight.Add(1)
		s.mu.Unlock()
		defer s.inflight.Done()
		h.ServeHTTP(w, r)
	})
}
