package gateway

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// Keys are the gateway keys: each has a name and the environments a request made with it
// may claim. Only each key's SHA-256 is kept.
type Keys struct {
	keys []key
}

type key struct {
	name string
	hash [sha256.Size]byte
	envs []string // "*": any
}

// ParseKeys reads a keys file: one key per line, "name key env1,env2", fields separated
// by space. The key is the secret itself, or "sha256:" and its hex digest (so the file
// need not hold the secret); the environments are those the key may claim in
// X-Streamrules-Env, "*" for any, "-" for none. Blank lines and lines starting with # are
// skipped.
func ParseKeys(r io.Reader) (*Keys, error) {
	var ks Keys
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("gateway keys: line %d: want \"name key envs\", got %d fields", n, len(f))
		}
		k := key{name: f[0]}
		if h, ok := strings.CutPrefix(f[1], "sha256:"); ok {
			b, err := hex.DecodeString(h)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("gateway keys: line %d: key %q: sha256: wants 64 hex digits", n, k.name)
			}
			copy(k.hash[:], b)
		} else {
			k.hash = sha256.Sum256([]byte(f[1]))
		}
		if f[2] != "-" {
			k.envs = strings.Split(f[2], ",")
		}
		if slices.ContainsFunc(ks.keys, func(o key) bool { return o.name == k.name }) {
			return nil, fmt.Errorf("gateway keys: line %d: key name %q twice", n, k.name)
		}
		ks.keys = append(ks.keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("gateway keys: %w", err)
	}
	if len(ks.keys) == 0 {
		return nil, fmt.Errorf("gateway keys: no key in the file")
	}
	return &ks, nil
}

// Len is the number of keys.
func (k *Keys) Len() int { return len(k.keys) }

// find returns the key whose hash is secret's.
func (k *Keys) find(secret string) *key {
	h := sha256.Sum256([]byte(secret))
	var found *key
	for i := range k.keys {
		if subtle.ConstantTimeCompare(h[:], k.keys[i].hash[:]) == 1 {
			found = &k.keys[i]
		}
	}
	return found
}

// allows reports whether the key may claim env.
func (k *key) allows(env string) bool {
	return slices.Contains(k.envs, "*") || slices.Contains(k.envs, env)
}

// authorize checks the request's gateway key, when the gateway has keys, and that it
// may claim envs. It answers 401 or 403 itself and returns false then.
func (g *Gateway) authorize(w http.ResponseWriter, r *http.Request, envs []string) (string, bool) {
	if g.cfg.Keys == nil {
		return "", true
	}
	secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	var k *key
	if ok {
		k = g.cfg.Keys.find(strings.TrimSpace(secret))
	}
	if k == nil {
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "gateway: missing or unknown gateway key (Authorization: Bearer <key>)")
		return "", false
	}
	for _, e := range envs {
		if !k.allows(e) {
			writeError(w, http.StatusForbidden, "invalid_request_error", fmt.Sprintf("gateway: key %q may not claim environment %q", k.name, e))
			return "", false
		}
	}
	return k.name, true
}

// Claim reports which key secret is and whether that key may claim env, comparing hashes
// in constant time as a request's key is compared. known is false when secret is no key
// (name is then empty). A key with "*" may claim any environment, env included. The
// console uses it to let a key that may claim "master" log in (console.Config.Keys).
func (k *Keys) Claim(secret, env string) (name string, known, allowed bool) {
	if k == nil {
		return "", false, false
	}
	found := k.find(secret)
	if found == nil {
		return "", false, false
	}
	return found.name, true, found.allows(env)
}

// Claimable reports whether some key may claim env.
func (k *Keys) Claimable(env string) bool {
	if k == nil {
		return false
	}
	return slices.ContainsFunc(k.keys, func(o key) bool { return o.allows(env) })
}
