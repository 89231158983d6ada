package entity

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// harness is a netroom.Room, as a NetPredictor finds it, on a scripted
// server link (testkit.FakeLink) and a clock the test steps; no direct
// links.
type harness struct {
	t     testing.TB
	room  *netroom.Room
	link  *testkit.FakeLink
	clock *testkit.Clock
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	h := &harness{t: t, link: testkit.NewFakeLink("tok-1"), clock: &testkit.Clock{}}
	cfg := netroom.Config{Server: "127.0.0.1:8787", NoDirect: true}
	cfg.Clock = h.clock
	cfg.Dial = func(context.Context, string, *serverlink.Options) (netroom.ServerLink, error) { return h.link, nil }
	r, err := netroom.New(cfg)
	require.NoError(t, err)
	h.room = r
	t.Cleanup(func() {
		r.Close()
		if !r.Wait(5 * time.Second) {
			t.Error("room goroutines did not end")
		}
	})
	return h
}

// joined returns a harness seated in slot with Ann (0), Bob (1) and Cy
// (2); host is the host's slot.
func joined(t *testing.T, slot, host int) *harness {
	return seated(t, slot, host, player(0, "Ann"), player(1, "Bob"), player(2, "Cy"))
}

// seated returns a harness seated in slot in a room of players.
func seated(t testing.TB, slot, host int, players ...protocol.PlayerState) *harness {
	t.Helper()
	h := newHarness(t)
	require.NoError(t, h.room.Create())
	h.until(has(netroom.EventConnected))
	h.link.Msg(&protocol.Joined{Code: "ABCDEF", Invite: "nearzero://join/ABCDEF", Slot: slot,
		Room: protocol.RoomState{Code: "ABCDEF", Rev: 1, Phase: protocol.PhaseLobby, Host: host, Players: players}})
	h.until(has(netroom.EventJoined))
	return h
}

// until calls Update until cond holds on the events so far (the Room's
// requests finish in goroutines), failing after 5 s; it returns them.
func (h *harness) until(cond func([]netroom.Event) bool) []netroom.Event {
	h.t.Helper()
	var all []netroom.Event
	deadline := time.Now().Add(5 * time.Second)
	for {
		all = append(all, h.room.Update(h.clock.Now())...)
		if cond(all) {
			return all
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("condition not met; events so far: %v", kinds(all))
		}
		time.Sleep(time.Millisecond)
	}
}

// update runs one Update and returns a copy of its events.
func (h *harness) update() []netroom.Event {
	return append([]netroom.Event(nil), h.room.Update(h.clock.Now())...)
}

func has(k netroom.EventKind) func([]netroom.Event) bool {
	return func(evs []netroom.Event) bool {
		for _, e := range evs {
			if e.Kind == k {
				return true
			}
		}
		return false
	}
}

func kinds(evs []netroom.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Kind.String()
	}
	return out
}

func player(slot int, name string) protocol.PlayerState {
	return protocol.PlayerState{Slot: slot, User: "u" + name, Name: name, Connected: true}
}

// entityState is a state of slot's entity at x, received 5 ms after its
// stamp (seq 16 ms apart).
func entityState(slot, entity uint8, seq wire.Seq, x float64) serverlink.RemoteState {
	at := time.Duration(seq) * 16 * time.Millisecond
	return serverlink.RemoteState{State: wire.State{Slot: slot, Entity: entity, Seq: seq, Rot: geom.Identity,
		Pos: geom.Vec3{X: x}}, Local: at, Arrival: at + 5*time.Millisecond}
}
