// Package boundaries holds the one test of the repository's import rules
// (docs/architecture.md §1): which parts may depend on which; and the rule
// that the repository cites no design document outside it (docs_test.go).
package boundaries

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/nearzero/nearzero/"

// pkg is what `go list -json` says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	CgoFiles   []string
	Standard   bool
}

// rule is one boundary: the packages it covers, and a check of each of
// them (direct) or of each of their non-test dependencies (transitive).
type rule struct {
	name       string
	pattern    string // go list pattern, relative to the module root
	transitive bool
	// bad returns why a package (a dependency, or the package itself for
	// a direct rule) breaks the rule, or "".
	bad func(p pkg) string
	// covers are packages the rule must reach (relative to the module):
	// moving one out of its pattern fails the test instead of escaping it.
	covers []string
}

func under(path, part string) bool {
	return path == module+part || strings.HasPrefix(path, module+part+"/")
}

var rules = []rule{
	{
		name: "netcode is pure", pattern: "./netcode/...", transitive: true,
		covers: []string{"netcode/protocol", "netcode/typedargs"},
		bad: func(p pkg) string {
			switch {
			case len(p.CgoFiles) > 0 || p.ImportPath == "C":
				return "uses cgo"
			case under(p.ImportPath, "bindings"), under(p.ImportPath, "extension"),
				under(p.ImportPath, "client"), under(p.ImportPath, "server"):
				return "is not netcode"
			}
			return ""
		},
	},
	{
		name: "client has no server and no engine", pattern: "./client/...", transitive: true,
		covers: []string{"client/serverlink", "client/netroom", "client/entity"},
		bad: func(p pkg) string {
			if under(p.ImportPath, "server") || under(p.ImportPath, "extension") || under(p.ImportPath, "bindings") {
				return "is the server's or the engine's"
			}
			return ""
		},
	},
	{
		// The room model routes received states to a Receiver and keeps
		// who holds our entity ids; the entity models (client/entity)
		// bind to it. The cut runs one way, so neither reaches into the
		// other.
		name: "the room model knows no entity model", pattern: "./client/netroom",
		bad: func(p pkg) string {
			for _, imp := range p.Imports {
				if under(imp, "client/entity") {
					return "imports " + imp
				}
			}
			return ""
		},
	},
	{
		// The tests' shared set-ups start a real server, which client/
		// may do only in its tests: so internal/testkit lives outside
		// client/, and only tests import it.
		name: "only tests import the testkit", pattern: "./...",
		bad: func(p pkg) string {
			for _, imp := range p.Imports {
				if under(imp, "internal/testkit") {
					return "imports " + imp
				}
			}
			return ""
		},
	},
	{
		name: "server has no client", pattern: "./server/...", transitive: true,
		bad: func(p pkg) string {
			if under(p.ImportPath, "client") || under(p.ImportPath, "extension") || under(p.ImportPath, "bindings") {
				return "is the client's or the engine's"
			}
			return ""
		},
	},
	{
		name: "extension is glue over bindings, client, netcode and the embedded server", pattern: "./extension",
		bad: func(p pkg) string {
			for _, imp := range p.Imports {
				if !strings.HasPrefix(imp, module) {
					continue
				}
				if !under(imp, "bindings") && !under(imp, "client") && !under(imp, "netcode") && imp != module+"server/embedded" {
					return "imports " + imp
				}
			}
			return ""
		},
	},
	{
		// The bench measures the client that ships: it drives the client's
		// own packages and a real room, and simulates only the sockets.
		name: "bench drives client, netcode and the room", pattern: "./bench/...",
		bad: func(p pkg) string {
			for _, imp := range p.Imports {
				if !strings.HasPrefix(imp, module) {
					continue
				}
				if !under(imp, "bench") && !under(imp, "client") && !under(imp, "netcode") && imp != module+"server/room" {
					return "imports " + imp
				}
			}
			return ""
		},
	},
	{
		name: "the game library links no metrics exporter and no analytics sink", pattern: "./extension", transitive: true,
		bad: func(p pkg) string {
			if strings.HasPrefix(p.ImportPath, "github.com/prometheus/") || under(p.ImportPath, "server/internal/analytics") ||
				under(p.ImportPath, "server/metrics/prom") {
				return "belongs to the standalone server"
			}
			return ""
		},
	},
	{
		// Direct links use pion's ICE, DTLS, SCTP and data channel layers
		// alone (client/direct): the SDP and media parts of pion/webrtc
		// would add about 2 MB to every game for nothing.
		name: "the game library links no WebRTC media stack", pattern: "./extension", transitive: true,
		bad: func(p pkg) string {
			for _, m := range []string{"webrtc", "sdp", "srtp", "rtp", "rtcp", "interceptor"} {
				if p.ImportPath == "github.com/pion/"+m || strings.HasPrefix(p.ImportPath, "github.com/pion/"+m+"/") {
					return "is WebRTC's SDP or media stack"
				}
			}
			return ""
		},
	},
}

// list runs go list on pattern from the module root.
func list(t *testing.T, deps bool, pattern string) []pkg {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipped: the go command is not on PATH")
	}
	args := []string{"list", "-json=ImportPath,Imports,CgoFiles,Standard"}
	if deps {
		args = append(args, "-deps")
	}
	cmd := exec.Command(goBin, append(args, pattern)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go list %s", pattern)
	var ps []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		require.NoError(t, dec.Decode(&p))
		ps = append(ps, p)
	}
	require.NotEmpty(t, ps, pattern)
	return ps
}

func TestBoundaries(t *testing.T) {
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			seen := map[string]bool{}
			for _, p := range list(t, r.transitive, r.pattern) {
				seen[p.ImportPath] = true
				if why := r.bad(p); why != "" {
					t.Errorf("%s: %s %s", r.pattern, p.ImportPath, why)
				}
			}
			for _, c := range r.covers {
				assert.True(t, seen[module+c], "%s no longer covers %s", r.pattern, c)
			}
		})
	}
}

// TestRulesCatch: each rule refuses what it is there to refuse.
func TestRulesCatch(t *testing.T) {
	cases := map[string]pkg{
		"netcode is pure":                    {ImportPath: module + "client/netroom"},
		"client has no server and no engine": {ImportPath: module + "server/room"},
		"the room model knows no entity model": {
			ImportPath: module + "client/netroom", Imports: []string{module + "client/entity"}},
		"only tests import the testkit": {
			ImportPath: module + "client/netroom", Imports: []string{module + "internal/testkit"}},
		"server has no client": {ImportPath: module + "client"},
		"extension is glue over bindings, client, netcode and the embedded server": {
			ImportPath: module + "extension", Imports: []string{module + "server/room"}},
		"bench drives client, netcode and the room": {
			ImportPath: module + "bench", Imports: []string{module + "server/embedded"}},
		"the game library links no metrics exporter and no analytics sink": {
			ImportPath: "github.com/prometheus/client_golang/prometheus"},
		"the game library links no WebRTC media stack": {ImportPath: "github.com/pion/webrtc/v4"},
	}
	for _, r := range rules {
		p, ok := cases[r.name]
		require.True(t, ok, "no case for %q", r.name)
		assert.NotEmpty(t, r.bad(p), r.name)
	}
	ok := pkg{ImportPath: module + "netcode/wire", Imports: []string{"fmt"}}
	for _, r := range rules {
		assert.Empty(t, r.bad(ok), r.name)
	}
	assert.NotEmpty(t, rules[0].bad(pkg{ImportPath: module + "netcode/x", CgoFiles: []string{"x.go"}}), "cgo")
	assert.True(t, slices.ContainsFunc(rules, func(r rule) bool { return r.pattern == "./server/..." }))
}
