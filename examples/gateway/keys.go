package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentstepup/asu/stepup/keyring"
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

// keyReload is how often a running gateway re-reads its -keys file.
const keyReload = 5 * time.Second

// defaultGrace is how long a retired key keeps verifying when -grace does
// not say: longer than any approval waits to run.
const defaultGrace = 24 * time.Hour

// serviceKeys reads the -keys ring file, or creates it with one current
// key when it does not exist: the key of -key-file when one is given (so
// its MACs and seals keep verifying: the ring's id for it is derived from
// it), else 32 random bytes.
func serviceKeys(file string, from []byte, out io.Writer) (*keyring.Live, error) {
	created, err := createOnce(file, func() ([]byte, error) {
		secret := from
		if secret == nil {
			secret = make([]byte, minGateKey)
			if _, err := rand.Read(secret); err != nil {
				return nil, err
			}
		}
		r, err := keyring.Single(secret)
		if err != nil {
			return nil, err
		}
		return keyring.Encode(r), nil
	})
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	r, err := readRing(file)
	if err != nil {
		return nil, err
	}
	if created {
		fmt.Fprintf(out, "keys: created %s with key %s (share it with every replica of this store)\n", file, r.Current().ID)
	}
	return keyring.NewLive(r), nil
}

// readRing reads and validates a ring file; errors name the file, line
// and field, never a secret.
func readRing(file string) (*keyring.Ring, error) {
	b, err := readSecret(file)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	r, err := keyring.Parse(file, b)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	return r, nil
}

// watchKeys re-reads file every interval until ctx ends and gives live
// each ring that differs from the last; a file that does not read or
// validate is logged (file, line and field) and the ring in use kept. It
// returns a stop function that waits for the watcher to end.
func watchKeys(ctx context.Context, file string, live *keyring.Live, log io.Writer, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		last := keyring.Encode(live.Ring())
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			r, err := readRing(file)
			if err != nil {
				fmt.Fprintf(log, "gateway: %v (keeping the keys in use)\n", err)
				continue
			}
			if b := keyring.Encode(r); !bytes.Equal(b, last) {
				live.Set(r)
				last = b
				fmt.Fprintf(log, "gateway: keys: reloaded %s; current key %s\n", file, r.Current().ID)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// writeRing replaces file with r, atomically: written to a temporary file
// beside it (mode 0600), synced, renamed over it, and the directory
// synced, so a reader sees the old ring or the new, never a torn one.
func writeRing(file string, r *keyring.Ring) error {
	return writeAtomic(file, keyring.Encode(r), 0o600)
}

// writeAtomic replaces file with b, mode perm, as writeRing does.
func writeAtomic(file string, b []byte, perm os.FileMode) error {
	dir := filepath.Dir(file)
	tmp, err := os.CreateTemp(dir, ".asu-keys-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// writePublicRing writes the public half of r to file + ".pub" (mode
// 0644, atomically), what `verify audit --gate-key` reads to check
// checkpoints the ring signed, and returns its name.
func writePublicRing(file string, r *keyring.Ring) (string, error) {
	pub := file + ".pub"
	if err := writeAtomic(pub, keyring.EncodePublic(r.Public()), 0o644); err != nil {
		return "", fmt.Errorf("keys: write %s: %w", pub, err)
	}
	return pub, nil
}

// runKeys runs the keys command:
//
//	keys add     -keys FILE                 add a new verify-only key
//	keys promote -keys FILE -id ID [-grace] make ID current, retire the current key
//	keys rotate  -keys FILE [-grace 24h]    add and promote in one step (one replica)
//	keys prune   -keys FILE                 drop keys whose grace ended
//	keys list    -keys FILE                 ids and states
//
// Each prints one line, with key ids only, never a secret. Graces are
// measured from this machine's clock. Run one command at a time on a
// file: two at once may each write the ring it read.
func runKeys(stdout io.Writer, args []string, now func() time.Time) error {
	if len(args) == 0 {
		return errors.New("keys: give add, promote, rotate, prune or list")
	}
	verb := args[0]
	fs := flag.NewFlagSet("keys "+verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	file := fs.String("keys", "", "the key ring `file`")
	grace := fs.Duration("grace", defaultGrace, "how long the retired key keeps verifying")
	id := fs.String("id", "", "the key `id` to make current (promote)")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("keys %s: %w", verb, err)
	}
	if *file == "" || fs.NArg() > 0 {
		return fmt.Errorf("keys %s: give -keys FILE and no arguments", verb)
	}
	r, err := readRing(*file)
	if err != nil {
		return err
	}
	at := now()
	fresh := func() ([]byte, error) {
		s := make([]byte, minGateKey)
		_, err := rand.Read(s)
		return s, err
	}
	var line string
	switch verb {
	case "add":
		s, err := fresh()
		if err != nil {
			return err
		}
		var nid string
		if r, nid, err = r.Add(s); err != nil {
			return fmt.Errorf("keys add: %w", err)
		}
		line = fmt.Sprintf("keys: added %s (verify-only); once every replica holds it: keys promote -id %s", nid, nid)
	case "promote":
		old := r.Current().ID
		if r, err = r.Promote(*id, at, *grace); err != nil {
			return fmt.Errorf("keys promote: %w", err)
		}
		line = fmt.Sprintf("keys: current %s; retired %s until %s", r.Current().ID, old, at.Add(*grace).UTC().Format(time.RFC3339))
	case "rotate":
		s, err := fresh()
		if err != nil {
			return err
		}
		old := r.Current().ID
		if r, _, err = r.Rotate(s, at, *grace); err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		line = fmt.Sprintf("keys: current %s; retired %s until %s", r.Current().ID, old, at.Add(*grace).UTC().Format(time.RFC3339))
	case "prune":
		n := len(r.Keys())
		r = r.Prune(at)
		line = fmt.Sprintf("keys: pruned %d; current %s", n-len(r.Keys()), r.Current().ID)
	case "list":
		var parts []string
		for _, k := range r.Keys() {
			parts = append(parts, k.String())
		}
		fmt.Fprintln(stdout, "keys:", strings.Join(parts, ", "))
		return nil
	default:
		return fmt.Errorf("keys: unknown command %q (add, promote, rotate, prune, list)", verb)
	}
	if err := writeRing(*file, r); err != nil {
		return fmt.Errorf("keys %s: write %s: %w", verb, *file, err)
	}
	fmt.Fprintln(stdout, line)
	return nil
}
