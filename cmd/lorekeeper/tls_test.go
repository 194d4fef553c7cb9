package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// testPKI writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all signed by the CA, and returns their file paths.
type testPKI struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lorekeeper test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, name string, usage x509.ExtKeyUsage) (string, string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, _ := x509.MarshalECPrivateKey(key)
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kb)
	}
	p := testPKI{ca: write("ca.pem", "CERTIFICATE", caDER)}
	p.serverCert, p.serverKey = leaf(2, "server", x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = leaf(3, "client", x509.ExtKeyUsageClientAuth)
	return p
}

// serveHealth serves the gRPC health service with the server TLS flags.
func serveHealth(t *testing.T, f serverTLSFlags) string {
	t.Helper()
	opt, err := f.serverOption()
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opt)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

func checkHealth(t *testing.T, addr string, f clientTLSFlags) error {
	t.Helper()
	opt, err := f.dialOption()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
	return err
}

func TestGRPCTLS(t *testing.T) {
	p := newTestPKI(t)
	tlsOnly := serveHealth(t, serverTLSFlags{cert: p.serverCert, key: p.serverKey})
	mutual := serveHealth(t, serverTLSFlags{cert: p.serverCert, key: p.serverKey, clientCA: p.ca})
	withCert := clientTLSFlags{ca: p.ca, cert: p.clientCert, key: p.clientKey}

	tests := []struct {
		name   string
		addr   string
		client clientTLSFlags
		ok     bool
	}{
		{"TLS", tlsOnly, clientTLSFlags{ca: p.ca}, true},
		{"TLS refuses plaintext", tlsOnly, clientTLSFlags{}, false},
		{"mutual TLS with a client certificate", mutual, withCert, true},
		{"mutual TLS without a client certificate", mutual, clientTLSFlags{ca: p.ca}, false},
		{"untrusted server", tlsOnly, clientTLSFlags{ca: p.clientCert}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkHealth(t, tt.addr, tt.client)
			if (err == nil) != tt.ok {
				t.Errorf("health check: err = %v, want ok = %v", err, tt.ok)
			}
		})
	}
}

func TestTLSFlags_Misuse(t *testing.T) {
	if _, err := (&serverTLSFlags{clientCA: "ca.pem"}).serverOption(); err == nil {
		t.Error("--grpc-tls-client-ca without a server certificate was accepted")
	}
	if _, err := (&clientTLSFlags{cert: "c.pem", key: "k.pem"}).dialOption(); err == nil {
		t.Error("a client certificate without --grpc-tls-ca was accepted")
	}
	if _, err := (&serverTLSFlags{cert: "/nonexistent.pem", key: "/nonexistent.pem"}).serverOption(); err == nil {
		t.Error("a missing certificate file was accepted")
	}
}
