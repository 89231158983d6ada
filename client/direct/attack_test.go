package direct

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/logging"
	"github.com/pion/transport/v5/vnet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/protocol"
)

// checkCounter counts the ICE connectivity checks (STUN binding requests)
// a victim sends on a virtual network, by destination.
type checkCounter struct {
	mu    sync.Mutex
	total int
	dsts  map[string]int
}

func (c *checkCounter) filter(ch vnet.Chunk) bool {
	b := ch.UserData()
	// A STUN binding request: type 0x0001, the magic cookie at 4.
	if ch.Network() == "udp" && len(b) >= 20 && binary.BigEndian.Uint16(b) == 0x0001 &&
		binary.BigEndian.Uint32(b[4:]) == 0x2112A442 {
		c.mu.Lock()
		c.total++
		c.dsts[ch.DestinationAddr().String()]++
		c.mu.Unlock()
	}
	return true
}

// counts returns the checks sent so far and how many destinations they
// went to.
func (c *checkCounter) counts() (total, dsts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, len(c.dsts)
}

// newVictim returns a Mesh with the default Config in slot 1, linked with
// slot 0 (the attacker, who offers), on a virtual network (pion's vnet:
// nothing leaves this process) whose router counts the checks it sends.
func newVictim(t *testing.T, mod func(*Config)) (*Mesh, *checkCounter) {
	t.Helper()
	lf := logging.NewDefaultLoggerFactory()
	lf.DefaultLogLevel = logging.LogLevelDisabled
	router, err := vnet.NewRouter(&vnet.RouterConfig{CIDR: "203.0.113.0/24", QueueSize: 1 << 16, LoggerFactory: lf})
	require.NoError(t, err)
	nw, err := vnet.NewNet(&vnet.NetConfig{StaticIPs: []string{"203.0.113.2"}})
	require.NoError(t, err)
	require.NoError(t, router.AddNet(nw))
	cc := &checkCounter{dsts: map[string]int{}}
	router.AddChunkFilter(cc.filter)
	require.NoError(t, router.Start())
	t.Cleanup(func() { _ = router.Stop() })
	m := newMesh(t, nil, func(c *Config) {
		c.ICEOptions = []ice.AgentOption{ice.WithNet(nw), ice.WithNetworkTypes([]ice.NetworkType{ice.NetworkTypeUDP4})}
		c.ShareHostCandidates, c.LoopbackCandidates = false, false
		if mod != nil {
			mod(c)
		}
	})
	m.SetPeers(1, []int{0, 1})
	return m, cc
}

// attackerOffer returns an offer from slot 0 listing cands.
func attackerOffer(t *testing.T, cands []string) protocol.Signal {
	t.Helper()
	d, _ := testSignal(t)
	d.Cands = cands
	data, err := encodeSignal(&d)
	require.NoError(t, err)
	return protocol.Signal{From: 0, To: 1, Kind: KindOffer, Data: data}
}

// floodCandidates returns n candidates at addresses no one holds, a third
// each of host, server-reflexive and relay types, numbered from first
// (each address is new: 198.18.0.0/15, the benchmarking range).
func floodCandidates(first, n int) []string {
	out := make([]string, n)
	for i := range out {
		k := first + i
		ip := netip.AddrFrom4([4]byte{198, 18 + byte(k>>16&1), byte(k >> 8), byte(k)})
		switch i % 3 {
		case 0:
			out[i] = fmt.Sprintf("candidate:%d 1 udp 2130706431 %s 40000 typ host", k, ip)
		case 1:
			out[i] = fmt.Sprintf("candidate:%d 1 udp 1694498815 %s 40000 typ srflx raddr 0.0.0.0 rport 0", k, ip)
		default:
			out[i] = fmt.Sprintf("candidate:%d 1 udp 16777215 %s 40000 typ relay raddr 0.0.0.0 rport 0", k, ip)
		}
	}
	return out
}

// countAnswers ticks m and counts the answers it sends.
func countAnswers(m *Mesh, answers *int) {
	m.Tick()
	for _, s := range m.PollSignals(nil) {
		if s.Kind == KindAnswer {
			*answers++
		}
	}
}

// TestOfferFloodChecks: a peer that offers 5 times a second, each offer
// listing 100 candidates at addresses of its choosing (new ones each
// time), must not make us check more than MaxCandidates of them per
// answered offer, nor make us answer more offers than the offer budget
// allows: each candidate taken costs up to maxChecks+1 checks per local
// candidate, so these two bound the checks a peer can make us send.
func TestOfferFloodChecks(t *testing.T) {
	victim, cc := newVictim(t, nil)
	const offers, every = 15, 200 * time.Millisecond
	answers := 0
	t0 := time.Now()
	for i := range offers {
		victim.Signal(ptr(attackerOffer(t, floodCandidates(i*100, 100))))
		for next := t0.Add(time.Duration(i+1) * every); time.Now().Before(next); {
			countAnswers(victim, &answers)
			time.Sleep(5 * time.Millisecond)
		}
	}
	elapsed := time.Since(t0)
	total, dsts := cc.counts()
	t.Logf("%d offers of 100 candidates in %v: %d answered, %d checks to %d addresses (%.0f checks/s)",
		offers, elapsed.Round(time.Millisecond), answers, total, dsts, float64(total)/elapsed.Seconds())
	st := victim.Stats()
	maxAnswers := int(DefaultOfferBurst + DefaultOfferRate*elapsed.Seconds())
	assert.LessOrEqual(t, answers, maxAnswers, "offers answered")
	assert.EqualValues(t, offers-answers, st.OffersIgnored, "offers ignored")
	assert.LessOrEqual(t, dsts, answers*DefaultMaxCandidates, "addresses checked: at most MaxCandidates per answered offer")
	assert.LessOrEqual(t, total, dsts*(maxChecks+1), "checks: at most maxChecks+1 per pair (one local candidate)")
}

// TestTrickleFloodChecks: one offer, then 1,000 trickled candidates: at
// most MaxCandidates of them are checked.
func TestTrickleFloodChecks(t *testing.T) {
	victim, cc := newVictim(t, nil)
	answers := 0
	victim.Signal(ptr(attackerOffer(t, nil)))
	for _, c := range floodCandidates(0, 1000) {
		victim.Signal(&protocol.Signal{From: 0, To: 1, Kind: KindCandidate, Data: c})
	}
	settle(t, victim, cc, &answers)
	total, dsts := cc.counts()
	t.Logf("1 offer, 1000 trickled candidates: %d checks to %d addresses", total, dsts)
	assert.LessOrEqual(t, dsts, DefaultMaxCandidates, "addresses checked")
	assert.EqualValues(t, 1000-DefaultMaxCandidates, victim.Stats().Ignored, "candidates ignored")
}

// settle ticks victim until the addresses it checks stop growing for
// half a second (the upper bounds the tests assert only get safer on a
// slow machine: fewer checks go out).
func settle(t *testing.T, victim *Mesh, cc *checkCounter, answers *int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	last, since := -1, time.Now()
	for time.Since(since) < 500*time.Millisecond && time.Now().Before(deadline) {
		countAnswers(victim, answers)
		if _, d := cc.counts(); d != last {
			last, since = d, time.Now()
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAnswerHidesOurAddresses: with the default Config, the candidates we
// send a peer (any peer: nothing says it is on our network) carry no
// address of ours that is loopback, link-local or private, nor any host
// address at all (host candidates go as mDNS names), and no related
// address. This runs on the machine's real interfaces.
func TestAnswerHidesOurAddresses(t *testing.T) {
	victim := newMesh(t, nil, func(c *Config) { c.ICEOptions, c.ShareHostCandidates, c.LoopbackCandidates = nil, false, false })
	victim.SetPeers(1, []int{0, 1})
	victim.Signal(ptr(attackerOffer(t, nil)))
	var sent []string
	deadline := time.Now().Add(20 * time.Second)
	for !gathered(victim, 0) {
		require.True(t, time.Now().Before(deadline), "gathering completes")
		victim.Tick()
		time.Sleep(5 * time.Millisecond)
	}
	victim.Tick()
	for _, s := range victim.PollSignals(nil) {
		if s.Kind == KindCandidate {
			sent = append(sent, s.Data)
		}
	}
	t.Logf("candidates sent: %q", sent)
	for _, raw := range sent {
		c, err := ice.UnmarshalCandidate(raw)
		require.NoError(t, err, raw)
		if ip, err := netip.ParseAddr(c.Address()); err == nil {
			ip = ip.Unmap()
			assert.False(t, ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsPrivate() || ip.IsUnspecified(),
				"our %s address %s sent to a peer: %s", c.Type(), ip, raw)
			assert.NotEqual(t, ice.CandidateTypeHost, c.Type(), "a host address sent as it is: %s", raw)
		} else {
			assert.True(t, strings.HasSuffix(c.Address(), ".local"), "an mDNS name: %s", raw)
		}
		if r := c.RelatedAddress(); r != nil {
			assert.True(t, r.Address == "0.0.0.0" && r.Port == 0, "related address hidden: %s", raw)
		}
	}
}

// gathered reports whether the attempt with slot finished gathering.
func gathered(m *Mesh, slot int) bool {
	m.mu.Lock()
	p := m.peers[slot]
	var att *attempt
	if p != nil {
		att = p.att
	}
	m.mu.Unlock()
	if att == nil {
		return false
	}
	att.mu.Lock()
	agent := att.agent
	att.mu.Unlock()
	if agent == nil {
		return false
	}
	st, err := agent.GetGatheringState()
	return err == nil && st == ice.GatheringStateComplete
}

func ptr[T any](v T) *T { return &v }

// TestRemoteCandidateFilter: a peer's candidate is checked only at an
// address of one machine somewhere (or an mDNS name, for a host
// candidate): never our own machine (loopback, unless
// LoopbackCandidates), a link-local, unspecified, multicast, broadcast or
// reserved address, a name to look up, nor a type a peer never signals.
func TestRemoteCandidateFilter(t *testing.T) {
	host := func(addr string) string { return "candidate:1 1 udp 2130706431 " + addr + " 40000 typ host" }
	for _, c := range []struct {
		raw, why       string
		ok, okLoopback bool
	}{
		{host("198.51.100.7"), "public", true, true},
		{host("192.168.1.20"), "private (a peer sharing its host addresses)", true, true},
		{host("2001:db8::7"), "IPv6", true, true},
		{host("fd00::7"), "IPv6 ULA", true, true},
		{host("4c0a2f3e-5b6d-4e7f-8a9b-0c1d2e3f4a5b.local"), "an mDNS name", true, true},
		{"candidate:1 1 udp 1694498815 198.51.100.7 40000 typ srflx raddr 0.0.0.0 rport 0", "server-reflexive", true, true},
		{"candidate:1 1 udp 16777215 198.51.100.7 40000 typ relay raddr 10.0.0.1 rport 5", "relay", true, true},
		{host("127.0.0.1"), "loopback", false, true},
		{host("127.3.4.5"), "loopback /8", false, true},
		{host("::1"), "IPv6 loopback", false, true},
		{host("::ffff:127.0.0.1"), "v4-mapped loopback", false, true},
		{host("169.254.10.10"), "link-local", false, false},
		{host("fe80::1"), "IPv6 link-local", false, false},
		{host("0.0.0.0"), "unspecified", false, false},
		{host("::"), "IPv6 unspecified", false, false},
		{host("0.1.2.3"), "this network", false, false},
		{host("224.0.0.251"), "multicast", false, false},
		{host("ff02::1"), "IPv6 multicast", false, false},
		{host("255.255.255.255"), "broadcast", false, false},
		{host("192.168.1.255"), "a subnet's broadcast: not knowable, taken", true, true},
		{host("240.0.0.1"), "reserved", false, false},
		{host("example.com"), "a name to look up", false, false},
		{host("evil.example.local"), "two labels: not an mDNS name", false, false},
		{"candidate:1 1 udp 1694498815 4c0a2f3e.local 40000 typ srflx raddr 0.0.0.0 rport 0", "an mDNS name on a srflx", false, false},
		{"candidate:1 1 udp 1853824767 198.51.100.7 40000 typ prflx raddr 0.0.0.0 rport 0", "peer-reflexive", false, false},
		{"candidate:1 1 tcp 1518280447 198.51.100.7 40000 typ host tcptype passive", "TCP", false, false},
		{host("198.51.100.7")[:len(host("198.51.100.7"))-len(" 40000 typ host")] + " 0 typ host", "port 0", false, false},
		{"garbage", "garbage", false, false},
	} {
		_, _, err := remoteCandidate(c.raw, false)
		assert.Equal(t, c.ok, err == nil, "%s: %s: %v", c.why, c.raw, err)
		_, _, err = remoteCandidate(c.raw, true)
		assert.Equal(t, c.okLoopback, err == nil, "%s with loopback: %s: %v", c.why, c.raw, err)
	}
}

// TestLocalCandidateFilter: our candidates reach a peer without our own
// addresses unless the player shares them: a host candidate goes as an
// mDNS name only, loopback and link-local never (loopback with
// LoopbackCandidates), and no related address.
func TestLocalCandidateFilter(t *testing.T) {
	mk := func(raw string) ice.Candidate {
		c, err := ice.UnmarshalCandidate(raw)
		require.NoError(t, err)
		return c
	}
	for _, c := range []struct {
		raw, why       string
		hidden, shared bool // sent by default; sent with ShareHostCandidates
		sharedLoopback bool // sent with ShareHostCandidates and LoopbackCandidates
	}{
		{"1 1 udp 2130706431 4c0a2f3e-5b6d-4e7f-8a9b-0c1d2e3f4a5b.local 40000 typ host", "mDNS host", true, true, true},
		{"1 1 udp 2130706431 192.168.1.20 40000 typ host", "LAN host", false, true, true},
		{"1 1 udp 2130706431 2001:db8::20 40000 typ host", "IPv6 host", false, true, true},
		{"1 1 udp 2130706431 127.0.0.1 40000 typ host", "loopback host", false, false, true},
		{"1 1 udp 2130706431 fe80::1 40000 typ host", "link-local host", false, false, false},
		{"1 1 udp 1694498815 198.51.100.7 40000 typ srflx raddr 192.168.1.20 rport 40000", "srflx", true, true, true},
		{"1 1 udp 16777215 198.51.100.9 50000 typ relay raddr 198.51.100.7 rport 40000", "relay", true, true, true},
		{"1 1 udp 16777215 127.0.0.1 50000 typ relay raddr 127.0.0.1 rport 40000", "relay on loopback", false, false, true},
	} {
		for i, mode := range []struct{ share, loopback, want bool }{{false, false, c.hidden}, {true, false, c.shared}, {true, true, c.sharedLoopback}} {
			out, err := localCandidate(mk(c.raw), mode.share, mode.loopback)
			if !assert.Equal(t, mode.want, err == nil, "%s, mode %d: %v", c.why, i, err) || err != nil {
				continue
			}
			got := mk(out)
			if r := got.RelatedAddress(); r != nil {
				assert.Equal(t, "0.0.0.0", r.Address, out)
				assert.Zero(t, r.Port, out)
			}
			assert.Equal(t, mk(c.raw).Address(), got.Address())
			assert.Equal(t, mk(c.raw).Port(), got.Port())
		}
	}
}

// TestCandidateCap: an attempt takes at most MaxCandidates of a peer's
// candidates, no type more than half of them, so that a flood of host
// candidates (which come first) leaves room for the others.
func TestCandidateCap(t *testing.T) {
	var a attempt
	taken := [kinds]int{}
	for range 20 {
		if a.admit(kindHost, 16) {
			taken[kindHost]++
		}
	}
	for range 3 {
		if a.admit(kindSrflx, 16) {
			taken[kindSrflx]++
		}
	}
	for range 20 {
		if a.admit(kindRelay, 16) {
			taken[kindRelay]++
		}
	}
	assert.Equal(t, [kinds]int{8, 3, 5}, taken)
	var odd attempt
	assert.True(t, odd.admit(kindRelay, 1), "a cap of 1 takes one")
	assert.False(t, odd.admit(kindHost, 1))
}

// TestOfferRate: a peer's offers are answered at OfferRate after a burst
// of OfferBurst; the others are ignored and counted (simulated clock: the
// check is in Signal, before any attempt starts).
func TestOfferRate(t *testing.T) {
	var clock time.Duration
	var log logBuf
	m := newMesh(t, &log, func(c *Config) { c.Now = func() time.Duration { return clock } })
	m.SetPeers(1, []int{0, 1})
	offer := ptr(attackerOffer(t, nil))
	answered := func() uint64 {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.peers[0].stats.Attempts
	}
	for range 10 {
		m.Signal(offer)
	}
	assert.EqualValues(t, DefaultOfferBurst, answered(), "the burst")
	assert.EqualValues(t, 10-DefaultOfferBurst, m.Stats().OffersIgnored)
	clock += time.Duration(float64(time.Second) / DefaultOfferRate)
	m.Signal(offer)
	m.Signal(offer)
	assert.EqualValues(t, DefaultOfferBurst+1, answered(), "one more after 1/OfferRate")
	assert.Equal(t, 1, strings.Count(log.String(), "level=WARN msg=\"direct: offer ignored"), "warned once")
	st, ok := m.LinkStats(0)
	require.True(t, ok)
	assert.EqualValues(t, 11-DefaultOfferBurst, st.OffersIgnored)
}
