package streamrules

import (
	"context"
	"sync"
)

// Claims: a rule with a repeat limit (`once`, `after:N`) fires only after the
// store has claimed the firing atomically, so that two moves of one chat running at the
// same time (a user's second message, or two replicas on one database) cannot both fire
// it. The chat state read at BeginMove still filters first, so a rule the chat's history
// already rules out costs nothing, and rules without a repeat limit never claim.
//
// A claim waits at most Config.StoreTimeout, and the claims of one call (a tool call, an
// answer, a response's declared calls) run at once and share that bound (claimAllLocked).
// If it cannot be made (the database is down), the rule stays silent in the move: fail
// closed, as when the chat state could not be read.
// A store that is not a Claimer (a host's own) keeps the old behaviour: the chat state
// read at BeginMove decides alone.

// Claimer is a store that claims a repeat-limited firing before the engine emits it.
// ClaimFiring records, atomically, that rule fires in move `move` of the chat if the
// policy allows it given what is recorded (the move it last fired in); it returns true to
// the one caller that made the claim, false to every other. An error means no claim.
type Claimer interface {
	ClaimFiring(ctx context.Context, chatID, rule string, move int64, policy Repeat) (bool, error)
}

// claimLocked claims r's firing in this move when r has a repeat limit and the store is
// a Claimer; true means r may fire. A lost or failed claim silences r for the rest of the
// move. Shadowed rules do not claim: they emit nothing. Caller holds m.mu.
func (m *Move) claimLocked(r *compiledRule) bool {
	c, ok := m.eng.store.(Claimer)
	if !ok || !claims(r) {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.eng.storeTimeout)
	won, err := c.ClaimFiring(ctx, m.chatID, r.Name, m.number, r.repeat)
	cancel()
	return m.claimedLocked(r, won, err)
}

func claims(r *compiledRule) bool { return r.repeat.Kind != RepeatEvery && !r.shadow }

// claimAllLocked claims, as claimLocked does, the firings of every rule of rs that fires
// in one call, and keeps in rs those that may fire, in order. The claims run at once,
// under one StoreTimeout: a call that fires several repeat-limited rules waits one bound
// for all of them, not one per rule in series (a store that does not answer would hold
// the call for eight bounds with eight `once` rules). Caller holds m.mu.
func (m *Move) claimAllLocked(rs []*compiledRule) []*compiledRule {
	c, ok := m.eng.store.(Claimer)
	if !ok {
		return rs
	}
	n := 0
	for _, r := range rs {
		if claims(r) {
			n++
		}
	}
	if n <= 1 {
		out := rs[:0]
		for _, r := range rs {
			if m.claimLocked(r) {
				out = append(out, r)
			}
		}
		return out
	}
	type result struct {
		won bool
		err error
	}
	res := make([]result, len(rs))
	ctx, cancel := context.WithTimeout(context.Background(), m.eng.storeTimeout)
	var wg sync.WaitGroup
	for i, r := range rs {
		if claims(r) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i].won, res[i].err = c.ClaimFiring(ctx, m.chatID, r.Name, m.number, r.repeat)
			}()
		}
	}
	wg.Wait()
	cancel()
	out := rs[:0]
	for i, r := range rs {
		if !claims(r) || m.claimedLocked(r, res[i].won, res[i].err) {
			out = append(out, r)
		}
	}
	return out
}

// claimedLocked takes a claim's answer: true means r may fire. Caller holds m.mu.
func (m *Move) claimedLocked(r *compiledRule, won bool, err error) bool {
	if err != nil {
		m.eng.log.Warn("stream rules: repeat-limited firing not claimed; the rule is silent in this move (fail closed)",
			"chat", m.chatID, "move", m.number, "rule", r.Name, "err", err)
	}
	if !won || err != nil {
		if m.denied == nil {
			m.denied = map[string]bool{}
		}
		m.denied[r.Name] = true
		return false
	}
	return true
}

// ClaimFiring implements Claimer: exact for every engine on this store.
func (s *MemoryStore) ClaimFiring(_ context.Context, chatID, rule string, move int64, policy Repeat) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.chats[chatID]
	if !policy.Allows(st.LastFired[rule], move) || st.LastFired[rule] >= move {
		return false, nil
	}
	if st.LastFired == nil {
		st.LastFired = map[string]int64{}
	}
	st.LastFired[rule] = move
	s.chats[chatID] = st
	return true, nil
}
