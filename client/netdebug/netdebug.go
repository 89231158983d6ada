// Package netdebug samples a game's room for the editor's debugger: the
// nearzero tab of Godot's Debugger panel (addons/nearzero/debugger/),
// which plots each remote entity's data age, correction, drawn speed,
// path and pops, and each link's round trip, clock offset, loss, candidate
// pair and bytes per second, beside the room's facts. The NetRoom node samples its room
// with a Feed at DefaultEvery, only while a debugger is attached, and
// sends each Sample to the editor (EngineDebugger.send_message).
//
// Engine-free: a Feed reads a netroom.Room and the client/entity Remotes
// bound to it, on the room's goroutine (the engine's main thread).
package netdebug

import (
	"slices"
	"strconv"
	"time"

	"github.com/nearzero/nearzero/client/entity"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/predict"
)

// DefaultEvery is how often a Feed samples: 10 times a second, enough
// for plots over the last seconds and a tenth of a frame's worth of work.
const DefaultEvery = 100 * time.Millisecond

// Sample is the room at one moment.
type Sample struct {
	// Time is the local clock, in the room's time base.
	Time     time.Duration
	Room     Room
	Links    []Link   // the server link first, then one per direct link
	Entities []Entity // every remote entity bound to the room, by key
}

// Room is the room's facts.
type Room struct {
	Status  string // netroom.Status: "connected"...
	Code    string
	Slot    int // ours, -1 when in no room
	Host    int
	Phase   string
	Synced  bool
	Players []Player
}

// Player is one seat.
type Player struct {
	Slot      int
	Name      string
	Connected bool
}

// Link is one link's figures. Unknown figures are negative (Loss, the
// rates) or empty (Candidates).
type Link struct {
	// Name is "server" or "direct N" (the peer's slot).
	Name string
	Slot int // the direct peer's slot; -1 for the server link
	Up   bool
	// RTT is the best recent round trip; Offset the clock offset (server
	// minus local for the server link; local minus the peer's for a
	// direct link, as its stamps are mapped).
	RTT, Offset time.Duration
	// Loss is the share of remote states lost (0..1) over about the last
	// hundred, counted over every path: shown on the server link; -1 on a
	// direct link. Jitter is the mean arrival jitter of the drawn paths.
	Loss   float64
	Jitter time.Duration
	// InPerSec and OutPerSec are bytes per second each way since the
	// last sample; -1 before the second sample.
	InPerSec, OutPerSec float64
	// Candidates are the ICE candidate types of a direct link's selected
	// pair, local then remote ("host/srflx"); "" while it is down.
	Candidates string
}

// Entity is one remote entity's drawing figures.
type Entity struct {
	Slot, Entity int // netroom.Key; Slot -1 for a shared object
	// Age is the drawn data's age (now minus its newest sample); Speed the
	// drawn speed and Correction the correction being faded out, in units
	// (metres, pixels).
	Age               time.Duration
	Speed, Correction float64
	// Path is "server" or "direct"; Visibility "visible", "ghost" or
	// "hidden".
	Path, Visibility string
	// Pops and Snaps count the entity's visible jumps so far
	// (entity.DrawFigures).
	Pops, Snaps uint64
}

// traffic is a link's byte counts at a sample.
type traffic struct{ in, out int64 }

// Feed samples a room on a schedule. The zero value samples every
// DefaultEvery. Not safe for concurrent use.
type Feed struct {
	// Every is the time between samples; 0 means DefaultEvery.
	Every time.Duration

	next   time.Duration
	has    bool
	prevAt time.Duration
	prev   map[int]traffic // by link slot (-1: the server)
	cur    map[int]traffic
	keys   []netroom.Key
}

// Due reports whether a sample is due at now, and if so schedules the next.
func (f *Feed) Due(now time.Duration) bool {
	if f.has && now < f.next {
		return false
	}
	every := f.Every
	if every <= 0 {
		every = DefaultEvery
	}
	if !f.has || now-f.next > every {
		f.next = now // after a pause: no burst of catch-up samples
	}
	f.next += every
	f.has = true
	return true
}

// statser is the part of the server link that counts its bytes
// (*serverlink.Conn).
type statser interface{ Stats() serverlink.Stats }

// Sample fills s (its slices reused) with room's state at now.
func (f *Feed) Sample(room *netroom.Room, now time.Duration, s *Sample) {
	s.Time = now
	st := room.State()
	s.Room = Room{Status: room.Status().String(), Code: room.Code(), Slot: room.Slot(), Host: room.Host(),
		Phase: string(st.Phase), Synced: room.Synced(), Players: s.Room.Players[:0]}
	for _, p := range room.Players() {
		s.Room.Players = append(s.Room.Players, Player{Slot: p.Slot, Name: p.Name, Connected: p.Connected})
	}
	if f.cur == nil {
		f.prev, f.cur = map[int]traffic{}, map[int]traffic{}
	}
	clear(f.cur)
	dt := (now - f.prevAt).Seconds()
	rate := func(slot int, t traffic) (in, out float64) {
		f.cur[slot] = t
		p, ok := f.prev[slot]
		if !ok || dt <= 0 || t.in < p.in || t.out < p.out {
			return -1, -1
		}
		return float64(t.in-p.in) / dt, float64(t.out-p.out) / dt
	}

	s.Links = s.Links[:0]
	jitter, loss, ok := room.LinkFigures()
	if !ok {
		loss = -1
	}
	off, _ := room.ClockOffset(now)
	server := Link{Name: "server", Slot: -1, Up: room.Status() == netroom.StatusConnected, RTT: room.RTT(), Offset: off,
		Loss: loss, Jitter: jitter, InPerSec: -1, OutPerSec: -1}
	if ss, ok := room.Link().(statser); ok {
		st := ss.Stats()
		server.InPerSec, server.OutPerSec = rate(-1, traffic{st.BytesIn, st.BytesOut})
	}
	s.Links = append(s.Links, server)
	if room.Direct() != nil {
		for _, p := range room.Players() {
			if p.Slot == room.Slot() {
				continue
			}
			l := Link{Name: "direct " + strconv.Itoa(p.Slot), Slot: p.Slot, Up: room.DirectUp(p.Slot), Loss: -1,
				InPerSec: -1, OutPerSec: -1}
			if fig, ok := room.DirectLinkStats(p.Slot); ok {
				l.RTT, l.Offset = fig.RTT, fig.Offset
				l.InPerSec, l.OutPerSec = rate(p.Slot, traffic{fig.BytesIn, fig.BytesOut})
				if fig.Local != "" {
					l.Candidates = fig.Local + "/" + fig.Remote
				}
			}
			s.Links = append(s.Links, l)
		}
	}
	f.prev, f.cur = f.cur, f.prev
	f.prevAt = now

	s.Entities = s.Entities[:0]
	f.keys = f.keys[:0]
	room.EachReceiver(func(k netroom.Key, _ netroom.Receiver) { f.keys = append(f.keys, k) })
	slices.SortFunc(f.keys, func(a, b netroom.Key) int {
		if a.Slot != b.Slot {
			return a.Slot - b.Slot
		}
		return a.Entity - b.Entity
	})
	for _, k := range f.keys {
		rem, ok := room.BoundEntity(k).(*entity.Remote)
		if !ok {
			continue
		}
		pose, fig := rem.Pose(), rem.DrawFigures()
		e := Entity{Slot: k.Slot, Entity: k.Entity, Age: pose.Age, Speed: fig.Speed, Correction: pose.Correction,
			Path: pose.Path.String(), Visibility: visibility(pose.Visibility), Pops: fig.Pops, Snaps: fig.Snaps}
		if !pose.Valid {
			e.Path = ""
		}
		s.Entities = append(s.Entities, e)
	}
}

func visibility(v predict.Visibility) string {
	switch v {
	case predict.Visible:
		return "visible"
	case predict.Ghost:
		return "ghost"
	}
	return "hidden"
}
