package testkit

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nearzero/nearzero/server"
	"github.com/nearzero/nearzero/server/metrics/prom"
)

// Server is a room server on a loopback port.
type Server struct {
	// Addr is its host:port, what a player types as the server address.
	Addr string
	// Metrics is the registry its metrics are exported to (Counter).
	Metrics *prometheus.Registry

	srv  *server.Server
	done chan error
	stop sync.Once
}

// RunServer starts a room server with deps on a loopback port, with its
// metrics in a fresh registry unless deps has some; Stop stops it. For
// examples and other code without a testing.TB: tests call StartServer.
func RunServer(deps server.Deps) (*Server, error) {
	s := &Server{done: make(chan error, 1)}
	if deps.Metrics == nil {
		s.Metrics = prometheus.NewRegistry()
		m, h, err := prom.New(s.Metrics)
		if err != nil {
			return nil, fmt.Errorf("testkit: metrics: %w", err)
		}
		deps.Metrics, deps.MetricsHandler = m, h
	}
	var err error
	// New rooms are taken whatever the machine's load: a test creates
	// rooms on a busy machine, and the overload policy has its own tests.
	if s.srv, err = server.New(&server.Config{OverloadAfter: -1}, deps); err != nil {
		return nil, fmt.Errorf("testkit: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testkit: %w", err)
	}
	s.Addr = ln.Addr().String()
	go func() { s.done <- s.srv.Serve(ln) }()
	<-s.srv.Ready()
	return s, nil
}

// StartServer is RunServer for a test: the server stops when the test
// ends, and a server that cannot start fails the test.
func StartServer(t testing.TB, deps server.Deps) *Server {
	t.Helper()
	s, err := RunServer(deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// DatagramAddr returns the UDP address of the server's datagram path
// (host:port), or "" when it is off.
func (s *Server) DatagramAddr() string {
	if a := s.srv.DatagramAddr(); a != nil {
		return a.String()
	}
	return ""
}

// URL returns the server's WebSocket URL (ws://host:port/ws), what
// serverlink.Dial takes.
func (s *Server) URL() string { return "ws://" + s.Addr + "/ws" }

// Stop shuts the server down, waiting up to 10 s for its connections to
// close; later calls do nothing.
func (s *Server) Stop() {
	s.stop.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(ctx)
		<-s.done
	})
}

// Counter reads the counter name from the server's metrics (its first
// series), failing the test when there is none.
func (s *Server) Counter(t testing.TB, name string) float64 {
	t.Helper()
	if s.Metrics == nil {
		t.Fatalf("testkit: counter %s: the server's metrics are the caller's (Deps.Metrics)", name)
	}
	mfs, err := s.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("testkit: no metric %s", name)
	return 0
}
