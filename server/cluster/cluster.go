package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of Config.
const (
	DefaultRegion      = "default"
	DefaultTTL         = 15 * time.Second
	DefaultRoomsBucket = "rooms"
	DefaultNodesBucket = "nodes"
	DefaultTimeout     = 2 * time.Second
	DefaultReplicas    = 1
)

// ErrInvalidConfig indicates a Config field out of range.
var ErrInvalidConfig = errors.New("cluster: invalid config")

// ErrNoNode indicates that no live node of the region can take a new room.
var ErrNoNode = errors.New("cluster: no node can take a new room")

// Config configures a Node. Zero fields take their defaults.
type Config struct {
	// URL is the NATS server URL, or several separated by commas.
	// Required.
	URL string
	// NodeID names this node in the directory: 1 to 64 letters, digits,
	// '-' or '_'. Required; unique per running node (a restarted node
	// keeps its id).
	NodeID string
	// PublicURL is the WebSocket URL clients reach this node at, e.g.
	// wss://eu-1.play.example.com/ws; redirects send clients there.
	// Required.
	PublicURL string
	// Region groups nodes for placement: a room is placed on a node of
	// the region asked for. Default "default".
	Region string
	// TTL is how long a directory entry lives after its last write: how
	// long a dead node's rooms stay listed. Default 15 s.
	TTL time.Duration
	// Refresh is how often the node rewrites its entries. Default TTL/3;
	// less than TTL.
	Refresh time.Duration
	// MaxRooms is this node's room capacity, published for placement;
	// 0 means no limit (the server still refuses past its own).
	MaxRooms int
	// RoomsBucket and NodesBucket name the key-value buckets. Defaults
	// "rooms" and "nodes".
	RoomsBucket, NodesBucket string
	// Replicas is the JetStream replica count of the buckets (1, 3 or 5).
	// Default 1.
	Replicas int
	// Memory keeps the buckets in memory instead of on disk (tests).
	Memory bool
	// Timeout bounds each directory call. Default 2 s.
	Timeout time.Duration
	// Registry receives the cluster metrics; nil registers none.
	Registry prometheus.Registerer
	// Log receives the node's logs; nil discards them.
	Log *slog.Logger
}

var nodeIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// withDefaults returns a copy with zero fields set to their defaults.
func (c *Config) withDefaults() Config {
	d := *c
	if d.Region == "" {
		d.Region = DefaultRegion
	}
	if d.TTL == 0 {
		d.TTL = DefaultTTL
	}
	if d.Refresh == 0 {
		d.Refresh = d.TTL / 3
	}
	if d.RoomsBucket == "" {
		d.RoomsBucket = DefaultRoomsBucket
	}
	if d.NodesBucket == "" {
		d.NodesBucket = DefaultNodesBucket
	}
	if d.Replicas == 0 {
		d.Replicas = DefaultReplicas
	}
	if d.Timeout == 0 {
		d.Timeout = DefaultTimeout
	}
	if d.Log == nil {
		d.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return d
}

// Validate reports the first field out of range, defaults applied first.
func (c *Config) Validate() error {
	d := c.withDefaults()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case d.URL == "":
		return bad("URL (the NATS server) is required")
	case !nodeIDRe.MatchString(d.NodeID):
		return bad("NodeID %q: want 1 to 64 letters, digits, '-' or '_'", d.NodeID)
	case d.TTL < 100*time.Millisecond:
		return bad("TTL %v below 100ms", d.TTL)
	case d.Refresh <= 0 || d.Refresh >= d.TTL:
		return bad("Refresh %v must be positive and below TTL %v", d.Refresh, d.TTL)
	case d.MaxRooms < 0:
		return bad("negative MaxRooms %d", d.MaxRooms)
	case d.Replicas != 1 && d.Replicas != 3 && d.Replicas != 5:
		return bad("Replicas %d: want 1, 3 or 5", d.Replicas)
	case d.Timeout <= 0:
		return bad("Timeout %v must be positive", d.Timeout)
	}
	u, err := url.Parse(d.PublicURL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return bad("PublicURL %q: want ws:// or wss://host/ws", d.PublicURL)
	}
	return nil
}

// Info is a node's entry in the nodes bucket.
type Info struct {
	ID       string `json:"id"`
	URL      string `json:"url"` // public WebSocket URL
	Region   string `json:"region"`
	Rooms    int    `json:"rooms"`
	Players  int    `json:"players"`
	MaxRooms int    `json:"max_rooms,omitempty"` // 0: no limit
	Draining bool   `json:"draining,omitempty"`
}

// peer is a node seen in the nodes bucket.
type peer struct {
	info    Info
	seen    time.Time // when its last entry arrived
	pending int       // rooms placed there since its last entry
}

// Node is this server's membership in the cluster. Its methods are safe
// for concurrent use.
type Node struct {
	cfg   Config
	log   *slog.Logger
	nc    *nats.Conn
	js    jetstream.JetStream
	rooms jetstream.KeyValue
	nodes jetstream.KeyValue
	load  atomic.Pointer[func() (int, bool)]

	mu      sync.Mutex // guards the four below
	claimed map[string]uint64
	peers   map[string]*peer
	watch   jetstream.KeyWatcher
	closed  bool // stopLoops began: no more background work

	dirty     chan struct{} // cap 1: publish the node entry now
	stop      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup

	redirects *prometheus.CounterVec
	dirErrors prometheus.Counter
	joinRedir atomic.Int64
	makeRedir atomic.Int64
}

// Start connects to NATS, opens (or creates) the buckets, drops room
// entries an earlier life of this node left behind, publishes the node
// and starts its refresh and watch loops. Close it when done.
func Start(ctx context.Context, cfg *Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := cfg.withDefaults()
	n := &Node{cfg: c, log: c.Log.With("node", c.NodeID), claimed: map[string]uint64{}, peers: map[string]*peer{},
		dirty: make(chan struct{}, 1), stop: make(chan struct{})}
	n.redirects = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nearzero_cluster_redirects_total",
		Help: "Clients sent to another node, by request (create: placed elsewhere, join: room elsewhere)."}, []string{"request"})
	n.dirErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "nearzero_cluster_directory_errors_total",
		Help: "Directory (NATS JetStream) calls that failed."})
	var err error
	n.nc, err = nats.Connect(c.URL, nats.Name("nearzero-server "+c.NodeID), nats.MaxReconnects(-1),
		nats.ReconnectWait(500*time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				n.log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { n.log.Info("nats reconnected", "url", nc.ConnectedUrlRedacted()) }))
	if err != nil {
		return nil, fmt.Errorf("cluster: connect to nats %s: %w", c.URL, err)
	}
	if err := n.open(ctx); err != nil {
		n.nc.Close()
		return nil, err
	}
	if c.Registry != nil {
		if err := n.register(c.Registry); err != nil {
			n.stopLoops()
			n.nc.Close()
			return nil, err
		}
	}
	return n, nil
}

// open opens the buckets and starts the loops.
func (n *Node) open(ctx context.Context) error {
	var err error
	if n.js, err = jetstream.New(n.nc); err != nil {
		return fmt.Errorf("cluster: jetstream: %w", err)
	}
	if n.rooms, n.nodes, err = n.buckets(ctx); err != nil {
		return err
	}
	if err := n.dropStale(ctx); err != nil {
		return err
	}
	if err := n.startWatch(); err != nil {
		return err
	}
	if err := n.publish(ctx); err != nil {
		n.stopLoops()
		return err
	}
	n.wg.Add(1)
	go n.refreshLoop()
	n.log.Info("joined the cluster", "region", n.cfg.Region, "url", n.cfg.PublicURL, "ttl", n.cfg.TTL)
	return nil
}

// buckets opens the buckets, creating them when missing.
func (n *Node) buckets(ctx context.Context) (rooms, nodes jetstream.KeyValue, err error) {
	storage := jetstream.FileStorage
	if n.cfg.Memory {
		storage = jetstream.MemoryStorage
	}
	bucket := func(name, desc string) (jetstream.KeyValue, error) {
		kv, err := n.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name, Description: desc,
			History: 1, TTL: n.cfg.TTL, Storage: storage, Replicas: n.cfg.Replicas})
		if err != nil {
			return nil, fmt.Errorf("cluster: open bucket %s: %w", name, err)
		}
		return kv, nil
	}
	if rooms, err = bucket(n.cfg.RoomsBucket, "nearzero room code -> node id"); err != nil {
		return nil, nil, err
	}
	if nodes, err = bucket(n.cfg.NodesBucket, "nearzero node id -> public URL, region, load"); err != nil {
		return nil, nil, err
	}
	return rooms, nodes, nil
}

// startWatch starts watching the nodes bucket, replacing an earlier watch.
// The watch outlives any call's context: it ends with Close.
func (n *Node) startWatch() error {
	w, err := n.nodes.WatchAll(context.Background())
	if err != nil {
		return fmt.Errorf("cluster: watch bucket %s: %w", n.cfg.NodesBucket, err)
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		_ = w.Stop()
		return nil
	}
	old := n.watch
	n.watch = w
	n.wg.Add(1)
	n.mu.Unlock()
	go n.watchLoop(w)
	if old != nil {
		_ = old.Stop()
	}
	return nil
}

// lostBuckets reports whether err says the buckets' streams are gone (NATS
// lost its data, or an operator deleted them).
func lostBuckets(err error) bool {
	return errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrStreamNotFound)
}

// remake re-creates lost buckets and restarts the watch; the next
// refresh writes every entry of this node again. The handles stay valid:
// they name the buckets, not one stream's life.
func (n *Node) remake(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	if _, _, err := n.buckets(ctx); err != nil {
		return err
	}
	n.log.Warn("directory buckets were gone: created them again")
	return n.startWatch()
}

// watchStalled reports whether this node's own entry, written every
// Refresh, stopped coming back through the watch: the watch lost its
// stream (NATS restarted without its data, or the buckets were made
// again by another node) and must be started again.
func (n *Node) watchStalled(now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.peers[n.cfg.NodeID]
	return p == nil || now.Sub(p.seen) > 2*n.cfg.Refresh+n.cfg.Timeout
}

// dropStale deletes room entries that name this node: they are left from
// an earlier life (a crash or a restart), and their rooms died with it.
func (n *Node) dropStale(ctx context.Context) error {
	keys, err := n.rooms.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("cluster: list rooms: %w", err)
	}
	var stale []string
	for k := range keys.Keys() {
		e, err := n.rooms.Get(ctx, k)
		if err == nil && string(e.Value()) == n.cfg.NodeID {
			if err := n.rooms.Delete(ctx, k, jetstream.LastRevision(e.Revision())); err == nil {
				stale = append(stale, k)
			}
		}
	}
	if len(stale) > 0 {
		n.log.Info("dropped rooms of an earlier run of this node", "rooms", len(stale))
	}
	return nil
}

// register adds the cluster metrics to reg.
func (n *Node) register(reg prometheus.Registerer) error {
	cs := []prometheus.Collector{n.redirects, n.dirErrors,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "nearzero_cluster_nats_connected",
			Help: "1 while the connection to NATS is up."}, func() float64 {
			if n.nc.IsConnected() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "nearzero_cluster_nodes",
			Help: "Live nodes in the directory, this one included."}, func() float64 { return float64(len(n.Nodes())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "nearzero_cluster_rooms",
			Help: "Rooms this node holds in the directory."}, func() float64 { return float64(n.roomCount()) }),
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("cluster: register metrics: %w", err)
		}
	}
	return nil
}

// Bind gives the node the server's live load: players seated and whether
// it drains. It is read on every refresh and placement.
func (n *Node) Bind(load func() (players int, draining bool)) { n.load.Store(&load) }

func (n *Node) loadNow() (players int, draining bool) {
	if f := n.load.Load(); f != nil {
		return (*f)()
	}
	return 0, false
}

// Changed asks for the node entry to be published now (a room opened or
// closed, a drain began), without waiting for the next refresh.
func (n *Node) Changed() {
	select {
	case n.dirty <- struct{}{}:
	default:
	}
}

// ID returns the node id.
func (n *Node) ID() string { return n.cfg.NodeID }

func (n *Node) roomCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.claimed)
}

// Place picks the node for a new room in region ("" for this node's
// region): here, or the public URL of another node. It reads the
// in-memory view of the nodes bucket only. It returns ErrNoNode when no
// live node of the region can take one.
func (n *Node) Place(region string) (publicURL string, here bool, err error) {
	if region == "" {
		region = n.cfg.Region
	}
	players, draining := n.loadNow()
	now := time.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	var best *peer
	bestID := ""
	if region == n.cfg.Region && !draining && (n.cfg.MaxRooms == 0 || len(n.claimed) < n.cfg.MaxRooms) {
		best = &peer{info: Info{Rooms: len(n.claimed), Players: players}}
		bestID = n.cfg.NodeID
	}
	for id, p := range n.peers {
		in := p.info
		if id == n.cfg.NodeID || !n.fresh(p, now) || in.Draining || in.Region != region ||
			(in.MaxRooms > 0 && in.Rooms+p.pending >= in.MaxRooms) {
			continue
		}
		if best == nil || lighter(in.Rooms+p.pending, in.Players, id, best.info.Rooms+best.pending, best.info.Players, bestID, n.cfg.NodeID) {
			best, bestID = p, id
		}
	}
	switch {
	case best == nil:
		return "", false, fmt.Errorf("%w in region %q", ErrNoNode, region)
	case bestID == n.cfg.NodeID:
		return "", true, nil
	}
	best.pending++ // until its next entry counts the room
	n.redirects.WithLabelValues("create").Inc()
	n.makeRedir.Add(1)
	return best.info.URL, false, nil
}

// lighter reports whether node a is a better place than node b: fewer
// rooms, then fewer players; a tie keeps this node (self), then the
// smaller id.
func lighter(aRooms, aPlayers int, aID string, bRooms, bPlayers int, bID, self string) bool {
	switch {
	case aRooms != bRooms:
		return aRooms < bRooms
	case aPlayers != bPlayers:
		return aPlayers < bPlayers
	case bID == self:
		return false
	}
	return aID < bID
}

// fresh reports whether p's entry is recent enough to trust (n.mu held).
func (n *Node) fresh(p *peer, now time.Time) bool { return now.Sub(p.seen) < n.cfg.TTL }

// Claim reserves code for a room on this node, cluster-wide; taken
// reports that another node holds it.
func (n *Node) Claim(ctx context.Context, code string) (taken bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	rev, err := n.rooms.Create(ctx, code, []byte(n.cfg.NodeID))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return true, nil
	}
	if err != nil {
		n.dirErrors.Inc()
		return false, fmt.Errorf("cluster: claim room %s: %w", code, err)
	}
	n.mu.Lock()
	n.claimed[code] = rev
	n.mu.Unlock()
	n.Changed()
	return false, nil
}

// Release gives up a room of this node (it closed). It does not block:
// the entry is deleted in the background.
func (n *Node) Release(code string) {
	n.mu.Lock()
	_, ok := n.claimed[code]
	delete(n.claimed, code)
	if ok && !n.closed {
		n.wg.Add(1) // under mu: never concurrent with stopLoops' Wait
	}
	ok = ok && !n.closed
	n.mu.Unlock()
	if !ok {
		return
	}
	n.Changed()
	go func() {
		defer n.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Timeout)
		defer cancel()
		if err := n.deleteOwn(ctx, code); err != nil {
			n.dirErrors.Inc()
			n.log.Warn("could not remove a closed room from the directory; it expires on its own", "room", code, "err", err)
		}
	}()
}

// deleteOwn deletes code's entry if it still names this node.
func (n *Node) deleteOwn(ctx context.Context, code string) error {
	e, err := n.rooms.Get(ctx, code)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get room %s: %w", code, err)
	}
	if string(e.Value()) != n.cfg.NodeID {
		return nil
	}
	if err := n.rooms.Delete(ctx, code, jetstream.LastRevision(e.Revision())); err != nil {
		return fmt.Errorf("delete room %s: %w", code, err)
	}
	return nil
}

// Locate finds the node running code: here (the entry names this node,
// which the caller checks against its own rooms), another live node's
// public URL, or found false when no live node runs it.
func (n *Node) Locate(ctx context.Context, code string) (publicURL string, here, found bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	e, err := n.rooms.Get(ctx, code)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return "", false, false, nil
	}
	if err != nil {
		n.dirErrors.Inc()
		return "", false, false, fmt.Errorf("cluster: look up room %s: %w", code, err)
	}
	id := string(e.Value())
	if id == n.cfg.NodeID {
		return "", true, true, nil
	}
	n.mu.Lock()
	p := n.peers[id]
	live := p != nil && n.fresh(p, time.Now())
	n.mu.Unlock()
	if !live { // its node stopped refreshing: the room died with it
		return "", false, false, nil
	}
	n.redirects.WithLabelValues("join").Inc()
	n.joinRedir.Add(1)
	return p.info.URL, false, true, nil
}

// Nodes returns the live nodes of the directory, sorted by id.
func (n *Node) Nodes() []Info {
	now := time.Now()
	n.mu.Lock()
	out := make([]Info, 0, len(n.peers))
	for _, p := range n.peers {
		if n.fresh(p, now) {
			out = append(out, p.info)
		}
	}
	n.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Health is the cluster part of a node's /healthz.
type Health struct {
	Node   string `json:"node"`
	Region string `json:"region"`
	URL    string `json:"url"`
	// NATS is the connection state: CONNECTED, RECONNECTING, CLOSED...
	NATS  string `json:"nats"`
	Nodes int    `json:"nodes"` // live nodes seen, this one included
	Rooms int    `json:"rooms"` // rooms this node holds in the directory
	// Redirects are clients sent elsewhere since start.
	RedirectsCreate int64 `json:"redirects_create"`
	RedirectsJoin   int64 `json:"redirects_join"`
}

// Health returns the node's cluster figures (a Health, as any for the
// server's interface).
func (n *Node) Health() any {
	return Health{Node: n.cfg.NodeID, Region: n.cfg.Region, URL: n.cfg.PublicURL, NATS: n.nc.Status().String(),
		Nodes: len(n.Nodes()), Rooms: n.roomCount(), RedirectsCreate: n.makeRedir.Load(), RedirectsJoin: n.joinRedir.Load()}
}

// info is this node's current entry.
func (n *Node) info() Info {
	players, draining := n.loadNow()
	return Info{ID: n.cfg.NodeID, URL: n.cfg.PublicURL, Region: n.cfg.Region, Rooms: n.roomCount(),
		Players: players, MaxRooms: n.cfg.MaxRooms, Draining: draining}
}

// publish writes this node's entry.
func (n *Node) publish(ctx context.Context) error {
	b, err := json.Marshal(n.info())
	if err != nil {
		return fmt.Errorf("cluster: encode node entry: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	_, err = n.nodes.Put(ctx, n.cfg.NodeID, b)
	if lostBuckets(err) {
		if rerr := n.remake(ctx); rerr != nil {
			err = errors.Join(err, rerr)
		} else {
			_, err = n.nodes.Put(ctx, n.cfg.NodeID, b)
		}
	}
	if err != nil {
		n.dirErrors.Inc()
		return fmt.Errorf("cluster: publish node %s: %w", n.cfg.NodeID, err)
	}
	return nil
}

// refreshLoop rewrites the node entry (every Refresh, and when Changed)
// and every room entry (every Refresh), so that they outlive the TTL
// while this node runs.
func (n *Node) refreshLoop() {
	defer n.wg.Done()
	t := time.NewTicker(n.cfg.Refresh)
	defer t.Stop()
	for {
		rooms := false
		select {
		case <-n.stop:
			return
		case <-n.dirty:
		case <-t.C:
			rooms = true
		}
		if err := n.publish(context.Background()); err != nil {
			n.log.Warn("refresh", "err", err)
		}
		if rooms {
			n.refreshRooms()
			if n.nc.IsConnected() && n.watchStalled(time.Now()) {
				n.log.Warn("the watch of the nodes bucket stalled; starting it again")
				if err := n.startWatch(); err != nil {
					n.log.Warn("refresh", "err", err)
				}
			}
		}
	}
}

// refreshRooms rewrites every room entry of this node. An entry that
// expired meanwhile (NATS was out longer than the TTL) is claimed again;
// one another node took since is given up with a warning.
func (n *Node) refreshRooms() {
	n.mu.Lock()
	revs := make(map[string]uint64, len(n.claimed))
	for code, rev := range n.claimed {
		revs[code] = rev
	}
	n.mu.Unlock()
	for code, rev := range revs {
		select {
		case <-n.stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Timeout)
		nrev, err := n.rooms.Update(ctx, code, []byte(n.cfg.NodeID), rev)
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			nrev, err = n.rooms.Create(ctx, code, []byte(n.cfg.NodeID))
		}
		cancel()
		n.mu.Lock()
		_, still := n.claimed[code]
		switch {
		case !still: // released meanwhile
		case errors.Is(err, jetstream.ErrKeyExists):
			delete(n.claimed, code)
			n.log.Warn("room code taken by another node while ours had expired; joins by code now go there", "room", code)
		case err == nil:
			n.claimed[code] = nrev
		}
		n.mu.Unlock()
		if err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
			n.dirErrors.Inc()
			n.log.Warn("refresh room", "room", code, "err", err)
		}
	}
}

// watchLoop keeps the in-memory view of the nodes bucket from w.
func (n *Node) watchLoop(w jetstream.KeyWatcher) {
	defer n.wg.Done()
	for e := range w.Updates() {
		if e == nil { // the initial values are all in
			continue
		}
		n.mu.Lock()
		switch e.Operation() {
		case jetstream.KeyValuePut:
			var in Info
			if err := json.Unmarshal(e.Value(), &in); err != nil || in.ID != e.Key() {
				n.mu.Unlock()
				n.log.Warn("ignoring a bad node entry", "key", e.Key(), "err", err)
				continue
			}
			n.peers[e.Key()] = &peer{info: in, seen: time.Now()}
		default: // deleted or purged: the node left
			delete(n.peers, e.Key())
		}
		n.mu.Unlock()
	}
}

// stopLoops ends the loops and background deletes.
func (n *Node) stopLoops() {
	n.closeOnce.Do(func() {
		n.mu.Lock()
		n.closed = true
		w := n.watch
		n.mu.Unlock()
		close(n.stop)
		if w != nil {
			_ = w.Stop()
		}
	})
	n.wg.Wait()
}

// Close leaves the cluster: the node entry and the entries of the rooms
// still held are deleted (other nodes then answer joins of those codes
// with "room gone" at once), and the NATS connection is closed.
func (n *Node) Close(ctx context.Context) error {
	n.stopLoops()
	var errs []error
	ctx, cancel := context.WithTimeout(ctx, 5*n.cfg.Timeout)
	defer cancel()
	n.mu.Lock()
	codes := make([]string, 0, len(n.claimed))
	for code := range n.claimed {
		codes = append(codes, code)
	}
	clear(n.claimed)
	n.mu.Unlock()
	if n.nc.IsConnected() {
		for _, code := range codes {
			if err := n.deleteOwn(ctx, code); err != nil {
				errs = append(errs, err)
				break
			}
		}
		if err := n.nodes.Delete(ctx, n.cfg.NodeID); err != nil {
			errs = append(errs, fmt.Errorf("delete node %s: %w", n.cfg.NodeID, err))
		}
	}
	// Every write above was acknowledged: nothing is left to flush.
	n.nc.Close()
	if len(errs) > 0 {
		return fmt.Errorf("cluster: leave: %w", errors.Join(errs...))
	}
	n.log.Info("left the cluster")
	return nil
}

// Kill stops the node the way a crash would: the NATS connection is cut
// and nothing is removed from the directory, so its entries expire on
// their own. For failure tests and drills.
func (n *Node) Kill() {
	n.nc.Close()
	n.stopLoops()
}
