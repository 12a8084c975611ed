package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// minGateKey is the shortest gate MAC key accepted (gate.WithKey's bound).
const minGateKey = 32

// gateKey reads the gate's MAC key from file, or creates it with 32 random
// bytes when it does not exist. Replicas sharing a store must share it:
// with different keys, an allowed or granted call runs only on the
// replica that allowed it.
func gateKey(file string) (key []byte, created bool, err error) {
	created, err = createOnce(file, func() ([]byte, error) {
		k := make([]byte, minGateKey)
		_, err := rand.Read(k)
		return k, err
	})
	if err != nil {
		return nil, false, fmt.Errorf("gate key: %w", err)
	}
	key, err = readSecret(file)
	if err != nil {
		return nil, false, fmt.Errorf("gate key: %w", err)
	}
	if len(key) < minGateKey {
		return nil, false, fmt.Errorf("gate key: %s holds %d bytes; it needs at least %d", file, len(key), minGateKey)
	}
	return key, created, nil
}

// checkpointKey reads the gate's ed25519 checkpoint key from file (PEM,
// PKCS #8 "PRIVATE KEY"), or creates it when it does not exist. Its public
// half is written beside it as file + ".pub" (PEM "PUBLIC KEY"), which is
// what `verify audit --gate-key` reads; publish that one.
func checkpointKey(file string) (ed25519.PrivateKey, string, error) {
	_, err := createOnce(file, func() ([]byte, error) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(priv)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint key: %w", err)
	}
	text, err := readSecret(file)
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint key: %w", err)
	}
	block, rest := pem.Decode(text)
	if block == nil || block.Type != "PRIVATE KEY" || len(bytes.TrimSpace(rest)) > 0 {
		return nil, "", fmt.Errorf("checkpoint key: %s is not one PEM PRIVATE KEY block", file)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	priv, ok := k.(ed25519.PrivateKey)
	if err != nil || !ok {
		return nil, "", fmt.Errorf("checkpoint key: %s is not an ed25519 private key", file)
	}
	pub := file + ".pub"
	der, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint key: %w", err)
	}
	want := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	if _, err := createOnce(pub, func() ([]byte, error) { return want, nil }); err != nil {
		return nil, "", fmt.Errorf("checkpoint key: %w", err)
	}
	if got, err := os.ReadFile(pub); err != nil || string(got) != string(want) {
		return nil, "", fmt.Errorf("checkpoint key: %s is not the public half of %s", pub, file)
	}
	return priv, pub, nil
}

// readSecret reads a key file, refusing one that others may read.
func readSecret(file string) ([]byte, error) {
	fi, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s is readable by others (mode %v); chmod 600 it", file, fi.Mode().Perm())
	}
	return os.ReadFile(file)
}

// createOnce writes the bytes make returns to file, mode 0600, unless file
// exists, and reports whether it wrote them. The file appears whole or not
// at all (written aside, then linked into place), so two replicas starting
// together agree on one file: the second one's link fails and it reads
// the first one's.
func createOnce(file string, make func() ([]byte, error)) (bool, error) {
	if _, err := os.Stat(file); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	b, err := make()
	if err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".asu-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return false, err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Link(tmp.Name(), file); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}
