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

	mu       sync.Mutex // guards the fields below
	claimed  map[string]uint64
	claiming map[string]int // codes whose claim is under way
	// suspects are codes whose write to the directory failed: it may
	// still land (NATS paused, or the write was buffered), naming this
	// node for a room it does not run. Checked at every refresh until
	// suspectFor has passed.
	suspects map[string]time.Time
	hereAt   []time.Time // rooms placed here whose claim has not come yet
	peers    map[string]*peer
	watch    jetstream.KeyWatcher
	endWatch context.CancelFunc // ends watch's context
	watchAt  time.Time          // when the watch was last started
	ownRev   uint64             // revision of this node's entry last seen through the watch
	pubRev   uint64             // revision of its last write
	pubAt    time.Time          // when that write was acknowledged
	closed   bool               // stopLoops began: no more background work

	joined    atomic.Bool   // the buckets are open and the loops run
	dirty     chan struct{} // cap 1: publish the node entry now
	trouble   chan struct{} // cap 1: NATS came back: write everything again now
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
//
// A NATS server that cannot be reached is no error: the node starts
// detached, as if NATS had gone away while it ran (creates and joins that
// need the directory fail with an error saying so), and joins the cluster
// on its own once NATS answers. Start fails on a bad Config, and when NATS
// answers but the directory cannot be opened (JetStream off, no rights).
func Start(ctx context.Context, cfg *Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := cfg.withDefaults()
	n := &Node{cfg: c, log: c.Log.With("node", c.NodeID), claimed: map[string]uint64{}, claiming: map[string]int{},
		suspects: map[string]time.Time{}, peers: map[string]*peer{},
		dirty: make(chan struct{}, 1), trouble: make(chan struct{}, 1), stop: make(chan struct{})}
	n.redirects = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nearzero_cluster_redirects_total",
		Help: "Clients sent to another node, by request (create: placed elsewhere, join: room elsewhere)."}, []string{"request"})
	n.dirErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "nearzero_cluster_directory_errors_total",
		Help: "Directory (NATS JetStream) calls that failed."})
	var err error
	n.nc, err = nats.Connect(c.URL, nats.Name("nearzero-server "+c.NodeID), nats.MaxReconnects(-1),
		nats.ReconnectWait(500*time.Millisecond), nats.RetryOnFailedConnect(true),
		// A write made while NATS is away fails at once instead of
		// being sent when it is back, long after its caller gave up.
		nats.ReconnectBufSize(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				n.log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ConnectHandler(func(nc *nats.Conn) {
			n.log.Info("nats connected", "url", nc.ConnectedUrlRedacted())
			n.troubled()
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			n.log.Info("nats reconnected", "url", nc.ConnectedUrlRedacted())
			n.troubled()
		}))
	if err != nil {
		return nil, fmt.Errorf("cluster: connect to nats %s: %w", c.URL, err)
	}
	if c.Registry != nil {
		if err := n.register(c.Registry); err != nil {
			n.nc.Close()
			return nil, err
		}
	}
	if n.nc.IsConnected() {
		if err := n.open(ctx); err != nil {
			n.stopLoops()
			n.nc.Close()
			return nil, err
		}
		return n, nil
	}
	n.log.Warn("nats is unreachable: serving without the cluster until it answers", "url", c.URL)
	n.wg.Add(1)
	go n.joinLoop()
	return n, nil
}

// joinLoop opens the directory once NATS answers (Start found it
// unreachable), retrying with back-off until it succeeds or Close.
func (n *Node) joinLoop() {
	defer n.wg.Done()
	wait := n.cfg.Refresh / 4
	for {
		select {
		case <-n.stop:
			return
		case <-n.trouble: // connected: try now
		case <-time.After(wait):
			wait = min(2*wait, n.cfg.Refresh)
		}
		if !n.nc.IsConnected() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*n.cfg.Timeout)
		err := n.open(ctx)
		cancel()
		if err == nil {
			return
		}
		n.log.Warn("could not join the cluster yet; retrying", "err", err)
	}
}

// troubled asks the refresh loop to write every entry again now and to
// restart the watch (NATS came back: writes made meanwhile may have been
// lost, or may land late, and the watch may have lost its stream).
func (n *Node) troubled() {
	select {
	case n.trouble <- struct{}{}:
	default:
	}
}

// open opens the buckets and starts the loops.
func (n *Node) open(ctx context.Context) error {
	js, err := jetstream.New(n.nc)
	if err != nil {
		return fmt.Errorf("cluster: jetstream: %w", err)
	}
	n.js = js
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
		return err
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.wg.Add(1) // under mu: never concurrent with stopLoops' Wait
	n.mu.Unlock()
	n.joined.Store(true)
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
	// Its own context: nats.go keeps a goroutine per watch until the
	// watch's context ends, Stop or not.
	ctx, cancel := context.WithCancel(context.Background())
	w, err := n.nodes.WatchAll(ctx)
	if err != nil {
		cancel()
		return fmt.Errorf("cluster: watch bucket %s: %w", n.cfg.NodesBucket, err)
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		_ = w.Stop()
		cancel()
		return nil
	}
	old, oldCancel := n.watch, n.endWatch
	n.watch, n.endWatch, n.watchAt = w, cancel, time.Now()
	n.wg.Add(1)
	n.mu.Unlock()
	go n.watchLoop(w)
	if old != nil {
		_ = old.Stop()
		oldCancel()
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

// watchStalled reports whether this node's own entry, last written more
// than watchGrace ago, has not come back through the watch: the watch
// lost its stream (NATS restarted without its data, or the buckets were
// made again by another node) and must be started again.
func (n *Node) watchStalled(now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pubRev != 0 && n.ownRev != n.pubRev && now.Sub(n.pubAt) > n.watchGrace()
}

// watchGrace is how long a write may take to come back through the watch.
func (n *Node) watchGrace() time.Duration { return min(n.cfg.Timeout, n.cfg.Refresh/2) }

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
//
// Rooms placed but not yet claimed count where they were placed (here:
// until Claim; elsewhere: until that node's next entry), so that a burst
// of creates spreads over the nodes. A node whose entry missed two
// refreshes gets no new rooms: it is likely gone, though its rooms stay
// listed until its entries expire.
func (n *Node) Place(region string) (publicURL string, here bool, err error) {
	if region == "" {
		region = n.cfg.Region
	}
	players, draining := n.loadNow()
	now := time.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pruneHereLocked(now)
	var best *peer
	bestID := ""
	mine := len(n.claimed) + len(n.hereAt)
	if region == n.cfg.Region && !draining && (n.cfg.MaxRooms == 0 || mine < n.cfg.MaxRooms) {
		best = &peer{info: Info{Rooms: mine, Players: players}}
		bestID = n.cfg.NodeID
	}
	for id, p := range n.peers {
		in := p.info
		if id == n.cfg.NodeID || !n.placeable(p, now) || in.Draining || in.Region != region ||
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
		n.hereAt = append(n.hereAt, now)
		return "", true, nil
	}
	best.pending++ // until its next entry counts the room
	n.redirects.WithLabelValues("create").Inc()
	n.makeRedir.Add(1)
	return best.info.URL, false, nil
}

// pruneHereLocked forgets placements here whose claim never came (the
// create was refused before it), n.mu held.
func (n *Node) pruneHereLocked(now time.Time) {
	i := 0
	for i < len(n.hereAt) && now.Sub(n.hereAt[i]) > 2*n.cfg.Timeout {
		i++
	}
	n.hereAt = n.hereAt[i:]
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

// placeable reports whether p's entry is recent enough to place a room
// there: it missed at most one refresh (n.mu held).
func (n *Node) placeable(p *peer, now time.Time) bool {
	return now.Sub(p.seen) < min(n.cfg.TTL, 2*n.cfg.Refresh+n.cfg.Timeout)
}

// errDetached indicates a call before the node could join the cluster.
var errDetached = errors.New("cluster: not joined yet: nats is unreachable")

// Claim reserves code for a room on this node, cluster-wide; taken
// reports that another node holds it.
func (n *Node) Claim(ctx context.Context, code string) (taken bool, err error) {
	n.mu.Lock()
	if len(n.hereAt) > 0 { // the placement it follows, if any
		n.hereAt = n.hereAt[1:]
	}
	if !n.joined.Load() {
		n.mu.Unlock()
		n.dirErrors.Inc()
		return false, fmt.Errorf("cluster: claim room %s: %w", code, errDetached)
	}
	n.claiming[code]++
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	rev, err := n.rooms.Create(ctx, code, []byte(n.cfg.NodeID))
	n.mu.Lock()
	if n.claiming[code]--; n.claiming[code] <= 0 {
		delete(n.claiming, code)
	}
	switch {
	case errors.Is(err, jetstream.ErrKeyExists):
		n.mu.Unlock()
		return true, nil
	case err != nil:
		// The write may still land: the refresh removes it then.
		n.suspects[code] = time.Now()
		n.mu.Unlock()
		n.dirErrors.Inc()
		return false, fmt.Errorf("cluster: claim room %s: %w", code, err)
	}
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
			n.log.Warn("could not remove a closed room from the directory; retrying at the next refresh", "room", code, "err", err)
			n.mu.Lock()
			n.suspects[code] = time.Now()
			n.mu.Unlock()
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
	if !n.joined.Load() {
		n.dirErrors.Inc()
		return "", false, false, fmt.Errorf("cluster: look up room %s: %w", code, errDetached)
	}
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

// maxPeers bounds the URLs Peers returns.
const maxPeers = 8

// Peers returns the public URLs of up to 8 other live nodes, this
// node's region first, sorted by id: where a client reconnects when this
// node is gone (package server sends them in the welcome).
func (n *Node) Peers() []string {
	var same, other []string
	for _, in := range n.Nodes() {
		switch {
		case in.ID == n.cfg.NodeID || in.URL == "":
		case in.Region == n.cfg.Region:
			same = append(same, in.URL)
		default:
			other = append(other, in.URL)
		}
	}
	out := append(same, other...)
	return out[:min(len(out), maxPeers)]
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
	rev, err := n.nodes.Put(ctx, n.cfg.NodeID, b)
	if lostBuckets(err) {
		if rerr := n.remake(ctx); rerr != nil {
			err = errors.Join(err, rerr)
		} else {
			rev, err = n.nodes.Put(ctx, n.cfg.NodeID, b)
		}
	}
	if err != nil {
		n.dirErrors.Inc()
		return fmt.Errorf("cluster: publish node %s: %w", n.cfg.NodeID, err)
	}
	n.mu.Lock()
	n.pubRev, n.pubAt = rev, time.Now()
	n.mu.Unlock()
	return nil
}

// refreshLoop rewrites the node entry (every Refresh, and when Changed)
// and every room entry (every Refresh), so that they outlive the TTL
// while this node runs. After any trouble it does not wait for the next
// Refresh: a round that failed is tried again after a quarter of it, and
// when NATS comes back everything is written again at once and the watch
// restarted. A watch whose own entry does not come back is restarted too.
func (n *Node) refreshLoop() {
	defer n.wg.Done()
	t := time.NewTicker(n.cfg.Refresh)
	defer t.Stop()
	var retry, check <-chan time.Time
	for {
		full, restart := false, false
		select {
		case <-n.stop:
			return
		case <-n.dirty:
		case <-t.C:
			full = true
		case <-retry:
			full, retry = true, nil
		case <-n.trouble:
			full, restart = true, true
		case <-check:
			check = nil
			if n.nc.IsConnected() && n.watchStalled(time.Now()) {
				n.log.Warn("the watch of the nodes bucket stalled; starting it again")
				restart = true
			}
		}
		ok := true
		if restart {
			if err := n.startWatch(); err != nil {
				n.log.Warn("restart the watch", "err", err)
				ok = false
			}
		}
		if err := n.publish(context.Background()); err != nil {
			n.log.Warn("refresh", "err", err)
			ok = false
		} else if check == nil {
			check = time.After(n.watchGrace() + time.Millisecond)
		}
		if full {
			ok = n.refreshRooms() && ok
			ok = n.sweepSuspects() && ok
			n.sweepPeers(time.Now())
		}
		if !ok && retry == nil {
			retry = time.After(n.cfg.Refresh / 4)
		}
	}
}

// transient reports whether err says NATS did not answer in time (or is
// away): the rest of a refresh round would fail the same way.
func (n *Node) transient(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrNoResponders) || !n.nc.IsConnected()
}

// refreshRooms rewrites every room entry of this node and reports whether
// all were written. An entry whose revision is not the one this node
// recorded is looked at (reassert): still this node's (a write that timed
// out landed after all), it is adopted; gone (it expired while NATS was
// away), it is claimed again; another node's, it is given up with a
// warning.
func (n *Node) refreshRooms() bool {
	n.mu.Lock()
	revs := make(map[string]uint64, len(n.claimed))
	for code, rev := range n.claimed {
		revs[code] = rev
	}
	n.mu.Unlock()
	ok := true
	for code, rev := range revs {
		select {
		case <-n.stop:
			return ok
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Timeout)
		nrev, err := n.rooms.Update(ctx, code, []byte(n.cfg.NodeID), rev)
		lost := false
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
			nrev, lost, err = n.reassert(ctx, code)
		}
		cancel()
		n.mu.Lock()
		_, still := n.claimed[code]
		switch {
		case !still: // released meanwhile
		case lost:
			delete(n.claimed, code)
			n.log.Warn("room code taken by another node while ours had expired; joins by code now go there", "room", code)
		case err == nil:
			n.claimed[code] = nrev
		}
		n.mu.Unlock()
		if err != nil {
			ok = false
			n.dirErrors.Inc()
			n.log.Warn("refresh room", "room", code, "err", err)
			if n.transient(err) {
				return false
			}
		}
	}
	return ok
}

// reassert writes code's entry for this node whatever revision it is at,
// unless another node holds it (lost).
func (n *Node) reassert(ctx context.Context, code string) (rev uint64, lost bool, err error) {
	for range 3 {
		e, err := n.rooms.Get(ctx, code)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
			rev, err = n.rooms.Create(ctx, code, []byte(n.cfg.NodeID))
		case err != nil:
			return 0, false, fmt.Errorf("reassert room %s: %w", code, err)
		case string(e.Value()) != n.cfg.NodeID:
			return 0, true, nil
		default:
			rev, err = n.rooms.Update(ctx, code, []byte(n.cfg.NodeID), e.Revision())
		}
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
			continue // written meanwhile: look again
		}
		if err != nil {
			return 0, false, fmt.Errorf("reassert room %s: %w", code, err)
		}
		return rev, false, nil
	}
	return 0, false, fmt.Errorf("reassert room %s: it keeps changing", code)
}

// suspectFor is how long a code whose write failed is watched for the
// write landing late, at least.
func (n *Node) suspectFor() time.Duration { return n.cfg.TTL }

// sweepSuspects removes the entries that name this node for rooms it does
// not run: claims that failed but landed later, deletes of closed rooms
// that failed. It reports whether every look-up was answered.
func (n *Node) sweepSuspects() bool {
	n.mu.Lock()
	codes := make([]string, 0, len(n.suspects))
	for code := range n.suspects {
		if _, ours := n.claimed[code]; ours || n.claiming[code] > 0 {
			delete(n.suspects, code) // a room of this node after all
			continue
		}
		codes = append(codes, code)
	}
	n.mu.Unlock()
	for _, code := range codes {
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.Timeout)
		e, err := n.rooms.Get(ctx, code)
		gone := errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted)
		if err != nil && !gone {
			cancel()
			n.dirErrors.Inc()
			n.log.Warn("look up a room entry that may be left over", "room", code, "err", err)
			return false
		}
		n.mu.Lock()
		_, ours := n.claimed[code]
		ours = ours || n.claiming[code] > 0
		since, watched := n.suspects[code]
		n.mu.Unlock()
		switch {
		case ours || !watched:
		case gone:
			if time.Since(since) < n.suspectFor() {
				cancel()
				continue // the write may land yet
			}
		case string(e.Value()) == n.cfg.NodeID:
			err = n.rooms.Delete(ctx, code, jetstream.LastRevision(e.Revision()))
			if err != nil {
				cancel()
				n.dirErrors.Inc()
				n.log.Warn("remove a left-over room entry", "room", code, "err", err)
				continue
			}
			n.log.Info("removed a room entry this node does not run (a write that had timed out landed)", "room", code)
		}
		cancel()
		n.mu.Lock()
		delete(n.suspects, code)
		n.mu.Unlock()
	}
	return true
}

// sweepPeers forgets the nodes whose entries expired, saying so: they
// stopped refreshing (crashed, hung, or cut from NATS). Only while this
// node's own view is sound (connected, its own entry coming back, the
// watch old enough to have seen every live node's refresh).
func (n *Node) sweepPeers(now time.Time) {
	if !n.nc.IsConnected() || n.watchStalled(now) {
		return
	}
	n.mu.Lock()
	if now.Sub(n.watchAt) < n.cfg.Refresh+n.cfg.Timeout {
		n.mu.Unlock()
		return // a new watch: the live nodes' entries are still coming
	}
	var dead []string
	for id, p := range n.peers {
		if id != n.cfg.NodeID && !n.fresh(p, now) {
			delete(n.peers, id)
			dead = append(dead, id)
		}
	}
	n.mu.Unlock()
	for _, id := range dead {
		n.log.Warn("node stopped refreshing its directory entry: taken for dead, its rooms are gone", "peer", id)
	}
}

// watchLoop keeps the in-memory view of the nodes bucket from w.
func (n *Node) watchLoop(w jetstream.KeyWatcher) {
	defer n.wg.Done()
	for e := range w.Updates() {
		if e == nil { // the initial values are all in
			continue
		}
		id := e.Key()
		n.mu.Lock()
		_, known := n.peers[id]
		switch e.Operation() {
		case jetstream.KeyValuePut:
			var in Info
			if err := json.Unmarshal(e.Value(), &in); err != nil || in.ID != id {
				n.mu.Unlock()
				n.log.Warn("ignoring a bad node entry", "key", id, "err", err)
				continue
			}
			n.peers[id] = &peer{info: in, seen: time.Now()}
			if id == n.cfg.NodeID {
				n.ownRev = e.Revision()
			}
			n.mu.Unlock()
			if !known && id != n.cfg.NodeID {
				n.log.Info("node joined the cluster", "peer", id, "url", in.URL, "region", in.Region)
			}
		default: // deleted or purged: the node left
			delete(n.peers, id)
			n.mu.Unlock()
			if known && id != n.cfg.NodeID {
				n.log.Info("node left the cluster", "peer", id)
			}
		}
	}
}

// stopLoops ends the loops and background deletes.
func (n *Node) stopLoops() {
	n.closeOnce.Do(func() {
		n.mu.Lock()
		n.closed = true
		w, end := n.watch, n.endWatch
		n.mu.Unlock()
		close(n.stop)
		if w != nil {
			_ = w.Stop()
			end()
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
	if n.joined.Load() && n.nc.IsConnected() {
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
