// Command catalog-server serves a file-based catalog over OLM's registry gRPC API on a LOOPBACK
// address. It is `opm serve` (operator-registry cmd/opm/serve/serve.go) minus three things that
// break the test bed's network rule or touch the host: opm serve listens on ":<port>" (every
// interface, serve.go:153 at v1.41.0), writes /etc/nsswitch.conf if it is missing, and starts a pprof
// listener. The cache and the gRPC servers are operator-registry's own (cache.LoadOrRebuild,
// server.NewRegistryServer, server.NewHealthServer).
//
// build-olm.sh copies this file into the writable copy of OLM's module directory and builds it in
// OLM's module graph, so it runs the operator-registry version that OLM's go.mod requires.
//
//	catalog-server <fbc-dir> <127.0.0.1:port>
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/operator-framework/operator-registry/pkg/api"
	"github.com/operator-framework/operator-registry/pkg/cache"
	"github.com/operator-framework/operator-registry/pkg/server"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	health "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "catalog-server:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 3 {
		return fmt.Errorf("usage: catalog-server <fbc-dir> <127.0.0.1:port>")
	}
	dir, addr := os.Args[1], os.Args[2]
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("refusing to listen on %q: loopback addresses only", addr)
	}
	logger := logrus.NewEntry(logrus.StandardLogger()).WithField("configs", dir)
	cacheDir, err := os.MkdirTemp("", "catalog-server-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cacheDir)
	ctx := context.Background()
	store, err := cache.New(cacheDir, cache.WithLog(logger))
	if err != nil {
		return err
	}
	defer store.Close()
	if err := cache.LoadOrRebuild(ctx, store, os.DirFS(dir)); err != nil {
		return fmt.Errorf("failed to load or rebuild cache: %v", err)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s := grpc.NewServer()
	api.RegisterRegistryServer(s, server.NewRegistryServer(store))
	health.RegisterHealthServer(s, server.NewHealthServer())
	reflection.Register(s)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sig; s.GracefulStop() }()
	logger.WithField("address", lis.Addr().String()).Info("serving registry")
	return s.Serve(lis)
}
