package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// serverTLSFlags configure TLS, and optionally mutual TLS, on the gRPC
// query service. With none set it serves plaintext, which is safe only on
// loopback (the default address).
type serverTLSFlags struct {
	cert, key, clientCA string
}

func (f *serverTLSFlags) register(fs *flagSet) {
	fs.String(&f.cert, "grpc-tls-cert", "", "serve gRPC over TLS with this certificate (PEM file)")
	fs.String(&f.key, "grpc-tls-key", "", "the certificate's private key (PEM file)")
	fs.String(&f.clientCA, "grpc-tls-client-ca", "", "require client certificates signed by this CA (mutual TLS)")
}

// serverOption returns the gRPC credentials option, or nil for plaintext.
func (f *serverTLSFlags) serverOption() (grpc.ServerOption, error) {
	if f.cert == "" && f.key == "" {
		if f.clientCA != "" {
			return nil, errors.New("--grpc-tls-client-ca needs --grpc-tls-cert and --grpc-tls-key")
		}
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, fmt.Errorf("--grpc-tls-cert/--grpc-tls-key: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if f.clientCA != "" {
		pool, err := certPool(f.clientCA)
		if err != nil {
			return nil, fmt.Errorf("--grpc-tls-client-ca: %w", err)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return grpc.Creds(credentials.NewTLS(cfg)), nil
}

// clientTLSFlags configure how clients (lorekeeper mcp and the client
// commands) reach a query service over TLS.
type clientTLSFlags struct {
	ca, cert, key, serverName string
}

func (f *clientTLSFlags) register(fs *flagSet) {
	fs.String(&f.ca, "grpc-tls-ca", "", "connect to gRPC over TLS, trusting this CA (PEM file)")
	fs.String(&f.cert, "grpc-tls-client-cert", "", "client certificate for mutual TLS (PEM file)")
	fs.String(&f.key, "grpc-tls-client-key", "", "the client certificate's private key (PEM file)")
	fs.String(&f.serverName, "grpc-tls-server-name", "", "expected server name in its certificate (default: the host of --grpc-addr)")
}

// dialOption returns the transport credentials: TLS when a CA is given,
// plaintext otherwise.
func (f *clientTLSFlags) dialOption() (grpc.DialOption, error) {
	if f.ca == "" {
		if f.cert != "" || f.key != "" {
			return nil, errors.New("--grpc-tls-client-cert needs --grpc-tls-ca")
		}
		return grpc.WithTransportCredentials(insecure.NewCredentials()), nil
	}
	pool, err := certPool(f.ca)
	if err != nil {
		return nil, fmt.Errorf("--grpc-tls-ca: %w", err)
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: f.serverName, MinVersion: tls.VersionTLS12}
	if f.cert != "" || f.key != "" {
		pair, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, fmt.Errorf("--grpc-tls-client-cert/--grpc-tls-client-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(cfg)), nil
}

func certPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}
