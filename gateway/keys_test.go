package gateway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/streamrules/streamrules/gateway"
)

// Claim finds a key by its secret (the secret itself or its sha256 in the file) and says
// whether it may claim an environment: "*" any, "-" none. Claimable asks it of all keys.
func TestKeysClaim(t *testing.T) {
	sum := sha256.Sum256([]byte("sk-hashed"))
	file := "# name key envs\nboss sk-boss master,telegram\n\nbot sk-bot telegram\nops sk-ops *\nmute sk-mute -\nvault sha256:" + hex.EncodeToString(sum[:]) + " master\n"
	k, err := gateway.ParseKeys(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		secret, env, name string
		known, allowed    bool
	}{
		{"sk-boss", "master", "boss", true, true},
		{"sk-boss", "client_ops", "boss", true, false},
		{"sk-bot", "master", "bot", true, false},
		{"sk-bot", "telegram", "bot", true, true},
		{"sk-ops", "master", "ops", true, true},
		{"sk-mute", "telegram", "mute", true, false},
		{"sk-hashed", "master", "vault", true, true},
		{"sha256:" + hex.EncodeToString(sum[:]), "master", "", false, false}, // the digest is not the key
		{"sk-nobody", "master", "", false, false},
		{"", "master", "", false, false},
	} {
		name, known, allowed := k.Claim(tt.secret, tt.env)
		if name != tt.name || known != tt.known || allowed != tt.allowed {
			t.Errorf("Claim(%q, %q) = %q, %v, %v; want %q, %v, %v", tt.secret, tt.env, name, known, allowed, tt.name, tt.known, tt.allowed)
		}
	}
	if !k.Claimable("master") || !k.Claimable("anything") {
		t.Error("Claimable: a key may claim master, and ops may claim anything")
	}
	only, err := gateway.ParseKeys(strings.NewReader("bot sk-bot telegram,client_ops\nmute sk-mute -\n"))
	if err != nil {
		t.Fatal(err)
	}
	if only.Claimable("master") || !only.Claimable("client_ops") {
		t.Error("Claimable: no key may claim master here, bot may claim client_ops")
	}
	var none *gateway.Keys
	if _, known, _ := none.Claim("sk-boss", "master"); known || none.Claimable("master") {
		t.Error("nil Keys: no key")
	}
}
