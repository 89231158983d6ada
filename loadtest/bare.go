package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// The bare relay is the load test's baseline: the same bots, the same
// WebSocket library, framing and batching as the room server (one
// connection's states queued in a ring of frames and written as one
// message of up to bareMaxBatch bytes per wake of its writer, after the
// same wait for a tick's states), and nothing else: no checks, no re-stamping, no budgets, no probes. It
// speaks just enough of the protocol for serverlink bots to join, ready
// up and play, and forwards each state frame as it came. What the room
// server relays, as a share of what this relays on the same machine in
// the same run, is the figure that holds across machines.

// Mirrors of the room server's writer (server/conn.go): keep them equal.
const (
	bareMaxBatch   = 4096 // the server's maxBatch
	bareStateQueue = 256  // server.Config's default StateQueue
	bareSlot       = 1 + wire.MaxStateSize
)

// bareRelay is the baseline relay's server.
type bareRelay struct {
	start    time.Time
	coalesce time.Duration // the server's Config.WriteCoalesce
	relayed  atomic.Int64  // state frames sent on, one per recipient
	writes   atomic.Int64  // messages of states written
	users    atomic.Int64

	mu    sync.Mutex
	rng   *rand.Rand
	rooms map[string]*bareRoom
	conns map[*bareConn]struct{}
	wg    sync.WaitGroup
}

// bareRoom is a room: its members, and just enough of a lobby and a start
// for the bots (client/serverlink) to reach the playing phase.
type bareRoom struct {
	code string
	// members is the fan-out list, replaced whole on a join (read without
	// a lock on the state path).
	members atomic.Pointer[[]*bareConn]

	mu    sync.Mutex // guards what follows
	state protocol.RoomState
}

// bareConn is one bot's connection.
type bareConn struct {
	r    *bareRelay
	ws   *websocket.Conn
	user string
	room *bareRoom // reader only
	slot int       // reader only

	qmu     sync.Mutex
	ctl     [][]byte
	ring    []byte
	head, n int
	closing bool
	woken   bool
	wake    chan struct{}
	done    chan struct{}
}

func (r *bareRelay) now() time.Duration { return time.Since(r.start) }

// startBare runs a bare relay on a free loopback port in this process,
// its writers waiting coalesce for a tick's states (server.Config's
// WriteCoalesce, defaults included).
func startBare(coalesce time.Duration) (stop func(), wsURL string, err error) {
	r := &bareRelay{start: time.Now(), coalesce: coalesce, rng: rand.New(rand.NewPCG(1, 2)), rooms: map[string]*bareRoom{},
		conns: map[*bareConn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", r.serveWS)
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "nearzero_states_relayed_total %d\nnearzero_state_writes_total %d\n", r.relayed.Load(), r.writes.Load())
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	return func() {
		_ = srv.Close()
		<-done
		r.mu.Lock()
		for c := range r.conns {
			_ = c.ws.CloseNow()
		}
		r.mu.Unlock()
		r.wg.Wait()
	}, "ws://" + ln.Addr().String() + "/ws", nil
}

func (r *bareRelay) serveWS(w http.ResponseWriter, req *http.Request) {
	ws, err := websocket.Accept(w, req, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(wire.ControlHeaderSize + wire.MaxControlBody)
	c := &bareConn{r: r, ws: ws, ring: make([]byte, bareStateQueue*bareSlot), wake: make(chan struct{}, 1),
		done: make(chan struct{}), slot: -1}
	r.mu.Lock()
	r.conns[c] = struct{}{}
	r.wg.Add(1)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
		r.wg.Done()
	}()
	go c.writeLoop()
	c.readLoop()
	c.qmu.Lock()
	c.closing = true
	c.qmu.Unlock()
	c.signal()
	<-c.done
	_ = ws.CloseNow()
}

func (c *bareConn) readLoop() {
	buf := make([]byte, wire.ControlHeaderSize+wire.MaxControlBody)
	for {
		_, rd, err := c.ws.Reader(context.Background())
		if err != nil {
			return
		}
		n := 0
		for {
			m, err := rd.Read(buf[n:])
			n += m
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil || n == len(buf) {
				return
			}
		}
		c.handle(buf[:n])
	}
}

// handle relays a batch of states to the rest of the room as it came, or
// answers a control message.
func (c *bareConn) handle(msg []byte) {
	switch wire.KindOf(msg) {
	case wire.KindState3D, wire.KindState2D:
		if c.room == nil {
			return
		}
		members := *c.room.members.Load()
		for rest := msg; len(rest) > 0; {
			frame, next, ok := protocol.NextState(rest)
			if !ok {
				return
			}
			rest = next
			n := 0
			for _, o := range members {
				if o != c {
					o.send(frame, false)
					n++
				}
			}
			c.r.relayed.Add(int64(n))
		}
	case wire.KindControl:
		m, err := protocol.Decode(msg)
		if err != nil {
			return
		}
		c.control(m)
	}
}

func (c *bareConn) control(m protocol.Message) {
	now := c.r.now()
	switch m := m.(type) {
	case *protocol.Hello:
		c.user = "u" + strconv.FormatInt(c.r.users.Add(1), 10)
		c.sendMsg(&protocol.Welcome{User: c.user, Token: c.user, Name: "bot " + c.user, ServerUS: protocol.US(now),
			Protocol: wire.ProtocolVersion, Rules: wire.RulesVersion})
	case *protocol.Ping:
		c.sendMsg(&protocol.Pong{TUS: m.TUS, ServerUS: protocol.US(now)})
	case *protocol.Create:
		c.r.mu.Lock()
		code := protocol.NewRoomCode(c.r.rng)
		for c.r.rooms[code] != nil {
			code = protocol.NewRoomCode(c.r.rng)
		}
		rm := &bareRoom{code: code, state: protocol.RoomState{Code: code, Phase: protocol.PhaseLobby, Host: 0}}
		rm.members.Store(&[]*bareConn{})
		c.r.rooms[code] = rm
		c.r.mu.Unlock()
		c.join(rm)
	case *protocol.Join:
		c.r.mu.Lock()
		rm := c.r.rooms[m.Code]
		c.r.mu.Unlock()
		if rm == nil {
			c.sendMsg(&protocol.Error{Code: protocol.CodeRoomNotFound, Request: protocol.TypeJoin, Message: "no such room"})
			return
		}
		c.join(rm)
	case *protocol.Loading:
		c.update(func(s *protocol.RoomState) { s.Players[c.slot].Loaded = m.Progress })
	case *protocol.Ready:
		c.update(func(s *protocol.RoomState) { s.Players[c.slot].Ready = m.Ready })
	case *protocol.Start:
		c.update(func(s *protocol.RoomState) { s.Phase, s.PhaseUS = protocol.PhaseHandshake, protocol.US(now) })
	case *protocol.InPosition:
		c.update(func(s *protocol.RoomState) {
			s.Players[c.slot].InPosition = true
			for _, p := range s.Players {
				if !p.InPosition {
					return
				}
			}
			s.Phase, s.PhaseUS, s.Round = protocol.PhasePlaying, protocol.US(now), 1
		})
	}
}

// join seats c in rm and tells every member.
func (c *bareConn) join(rm *bareRoom) {
	if c.room != nil {
		return
	}
	rm.mu.Lock()
	c.room, c.slot = rm, len(rm.state.Players)
	rm.state.Players = append(rm.state.Players, protocol.PlayerState{Slot: c.slot, User: c.user, Name: c.user, Connected: true})
	rm.state.Rev++
	members := append(append([]*bareConn(nil), *rm.members.Load()...), c)
	rm.members.Store(&members)
	st := rm.state
	st.Players = append([]protocol.PlayerState(nil), rm.state.Players...)
	rm.mu.Unlock()
	c.sendMsg(&protocol.Joined{Code: rm.code, Slot: c.slot, Room: st})
	c.broadcast(&st)
}

// update changes the room's state and sends it to every member.
func (c *bareConn) update(f func(*protocol.RoomState)) {
	rm := c.room
	if rm == nil {
		return
	}
	rm.mu.Lock()
	f(&rm.state)
	rm.state.Rev++
	st := rm.state
	st.Players = append([]protocol.PlayerState(nil), rm.state.Players...)
	rm.mu.Unlock()
	c.broadcast(&st)
}

func (c *bareConn) broadcast(st *protocol.RoomState) {
	b, err := protocol.Marshal(st)
	if err != nil {
		return
	}
	for _, o := range *c.room.members.Load() {
		o.send(b, true)
	}
}

func (c *bareConn) sendMsg(m protocol.Message) {
	if b, err := protocol.Marshal(m); err == nil {
		c.send(b, true)
	}
}

// send queues a frame: a control frame in order, a state frame in the
// ring, dropping the oldest when it is full (the server's Send).
func (c *bareConn) send(frame []byte, reliable bool) {
	c.qmu.Lock()
	if c.closing {
		c.qmu.Unlock()
		return
	}
	if reliable {
		c.ctl = append(c.ctl, append([]byte(nil), frame...))
	} else if len(frame) <= wire.MaxStateSize {
		slots := len(c.ring) / bareSlot
		if c.n == slots {
			c.head = (c.head + 1) % slots
			c.n--
		}
		i := (c.head + c.n) % slots * bareSlot
		c.ring[i] = byte(len(frame))
		copy(c.ring[i+1:], frame)
		c.n++
	}
	woken := c.woken
	c.woken = true
	c.qmu.Unlock()
	if !woken {
		c.signal()
	}
}

func (c *bareConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writeLoop is the server's writer: reliable frames in order, then every
// queued state in one message per bareMaxBatch bytes.
func (c *bareConn) writeLoop() {
	defer close(c.done)
	ctx := context.Background()
	batch := make([]byte, 0, bareMaxBatch)
	var ctl [][]byte
	for {
		<-c.wake
		c.coalesce()
		for {
			c.qmu.Lock()
			ctl, c.ctl = c.ctl, ctl[:0]
			c.woken = false
			batch = c.takeStatesLocked(batch[:0])
			closing := c.closing
			c.qmu.Unlock()
			if len(ctl) == 0 && len(batch) == 0 {
				if closing {
					_ = c.ws.Close(websocket.StatusNormalClosure, "")
					return
				}
				break
			}
			for i, f := range ctl {
				if c.ws.Write(ctx, websocket.MessageBinary, f) != nil {
					_ = c.ws.CloseNow()
					return
				}
				ctl[i] = nil
			}
			if len(batch) > 0 {
				c.r.writes.Add(1)
				if c.ws.Write(ctx, websocket.MessageBinary, batch) != nil {
					_ = c.ws.CloseNow()
					return
				}
			}
		}
	}
}

// coalesce is the server's (conn.coalesce): wait for the tick's other
// states when only states wait, else yield.
func (c *bareConn) coalesce() {
	if w := c.r.coalesce; w > 0 {
		c.qmu.Lock()
		states := c.n > 0 && len(c.ctl) == 0 && !c.closing
		c.qmu.Unlock()
		if states {
			time.Sleep(w)
			return
		}
	}
	runtime.Gosched()
}

func (c *bareConn) takeStatesLocked(batch []byte) []byte {
	slots := len(c.ring) / bareSlot
	for c.n > 0 {
		i := c.head * bareSlot
		l := int(c.ring[i])
		if len(batch)+l > bareMaxBatch {
			break
		}
		batch = append(batch, c.ring[i+1:i+1+l]...)
		c.head = (c.head + 1) % slots
		c.n--
	}
	return batch
}
