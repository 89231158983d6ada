package netlab

import (
	"os"
	"strings"
	"testing"
	"time"
)

// delayed is the lab's slow network at each router's edge: 40 ms ± 10 ms
// each way, as a far player on Wi-Fi.
var delayed = Impairment{Delay: 40 * time.Millisecond, Jitter: 10 * time.Millisecond}

// lossy is delayed with 2 % loss each way.
var lossy = Impairment{Delay: 40 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.02}

// turnFlags run the server's embedded TURN relay.
var turnFlags = []string{"-turn-addr", "0.0.0.0:3478", "-turn-public-ip", ServerIP}

// The lab's cases, by name.
var (
	casePortKept        = Case{Name: "port-kept NAT", Server: turnFlags}
	caseSymmetric       = Case{Name: "symmetric NAT", A: Side{NAT: Symmetric}, B: Side{NAT: Symmetric}, Server: turnFlags}
	caseBlocked         = Case{Name: "UDP blocked at one NAT", A: Side{NAT: UDPBlocked}, Server: turnFlags}
	caseJitter          = Case{Name: "port-kept NAT, 40±10 ms", A: Side{Impair: delayed}, B: Side{Impair: delayed}, Server: turnFlags}
	caseLossy           = Case{Name: "port-kept NAT, 40±10 ms, 2 % loss", A: Side{Impair: lossy}, B: Side{Impair: lossy}, Server: turnFlags}
	caseServer          = Case{Name: "server path only, 40±10 ms, 2 % loss", A: Side{Impair: lossy}, B: Side{Impair: lossy}, NoDirect: true}
	caseSimulated       = Case{Name: "server path only, lag simulator 40±10 ms, 2 % loss", NoDirect: true, Lag: "30ms,20ms,0.02"}
	caseLAN             = Case{Name: "one LAN, STUN/TURN unreachable", LAN: true, Server: turnFlags}
	casePortKeptNoRelay = Case{Name: "port-kept NAT, no relay candidates", Server: turnFlags, Player: []string{"-no-relay"}}
)

// TestTable runs every case and prints the README's table; NETLAB_CASES
// (comma-separated substrings of case names) picks some.
func TestTable(t *testing.T) {
	needLab(t)
	var rows []Row
	for _, c := range []Case{casePortKept, caseSymmetric, caseBlocked, caseJitter, caseLossy, caseServer, caseSimulated, caseLAN, casePortKeptNoRelay} {
		if sel := os.Getenv("NETLAB_CASES"); sel != "" && !matches(c.Name, sel) {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			o := runCase(t, c)
			r := RowOf(o)
			rows = append(rows, r)
			t.Logf("%s in %v\n%s", c.Name, o.Wall.Round(time.Millisecond), Table([]Row{r}))
		})
	}
	t.Logf("\n%s", Table(rows))
}

func matches(name, sel string) bool {
	for _, s := range strings.Split(sel, ",") {
		if s != "" && strings.Contains(name, s) {
			return true
		}
	}
	return false
}
