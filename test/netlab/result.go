package netlab

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/nearzero/nearzero/client/direct"
	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/geom"
)

// PathKind is the path a state came by, or a frame was drawn from.
type PathKind uint8

// Paths.
const (
	Server PathKind = iota
	Direct
)

func (p PathKind) String() string {
	if p == Direct {
		return "direct"
	}
	return "server"
}

// Result is what one player (the player program) recorded. Times are on
// the player's own clock unless said otherwise; OriginUnixNS puts them on
// the wall clock every namespace shares.
type Result struct {
	// OriginUnixNS is the wall time, in Unix nanoseconds, of the player's
	// clock's zero.
	OriginUnixNS int64
	// Joined is true for the player that joined, false for the creator.
	Joined bool
	// Slot is the player's slot, Peer the other player's.
	Slot, Peer int
	// Spawn is when the other player was seated (its EventSpawn): when
	// the direct link's first attempt starts.
	Spawn time.Duration
	// Start is when the recording started: the first frame that drew the
	// other player.
	Start time.Duration
	// Done is set once the recording ended.
	Done bool
	// Frames are the drawn frames from Start on.
	Frames []Frame
	// Sent are the states sent from Start on.
	Sent []Sent
	// Recv are the states received (both paths) over the whole run.
	Recv []Recv
	// PairLocal and PairRemote are the candidate types of the direct link
	// when it was first seen open; LinkUp when it came up.
	PairLocal, PairRemote string
	LinkUp                time.Duration
	// LinkUps are the direct links that came up during the recording.
	LinkUps []LinkUp
	// Link are the direct link's figures at the end of the recording; nil
	// when there was never a link.
	Link *direct.LinkStats
	// Stats are the Room's counters at the end of the recording.
	Stats netroom.Stats
}

// LinkUp is one direct link coming up.
type LinkUp struct {
	Since time.Duration // when (the player's clock)
	Took  time.Duration // from its attempt's start
	Pair  string        // candidate types, local/remote
}

// Frame is one drawn frame of the other player.
type Frame struct {
	T        time.Duration // since Start
	Valid    bool          // a pose was drawn
	Path     PathKind      // the path it was drawn from
	Age      time.Duration // now minus the newest sample on that path
	Lag      time.Duration // how far behind now it was drawn (Auto's render lag)
	Err      float64       // distance from the true position, m
	DirectUp bool          // the Room reported the direct link up
	Link     bool          // the direct link was open
	Datagram bool          // the server link's datagram path was up (states to and from the server as QUIC datagrams)
}

// Sent is one state sent.
type Sent struct {
	Seq        int
	Sample     time.Duration // its sample time
	DirectOpen bool          // the direct link was open when it was sent
}

// Recv is one state received.
type Recv struct {
	Slot, Entity, Seq int
	Path              PathKind
	Local             time.Duration // its sample time, mapped onto our clock
	Arrival           time.Duration
}

// moverTerms are the mover's sine terms: a 5 m circle at 1 rad/s with
// two smaller, faster wobbles, so speed and heading keep changing (up to
// about 9 m/s).
var moverTerms = [...]struct{ r, w float64 }{{5, 1}, {1.2, 2.3}, {0.4, 4.1}}

// At returns where the mover of slot is at Unix time unixNS, for the
// movers of seed starting at Unix time epochNS: a path of the wall clock
// alone, so the viewer knows where the sender truly was, and the same in
// every run of a seed.
func At(seed uint64, slot int, epochNS, unixNS int64) geom.Vec3 {
	rng := rand.New(rand.NewPCG(seed, uint64(slot)+1))
	t := float64(unixNS-epochNS) / 1e9
	var p geom.Vec3
	for _, term := range moverTerms {
		ph := rng.Float64() * 2 * math.Pi
		p.X += term.r * math.Cos(term.w*t+ph)
		p.Z += term.r * math.Sin(term.w*t+ph)
	}
	return p
}
