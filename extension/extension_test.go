package main

import (
	"bufio"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/entity"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/sender"
)

// These tests check the declarations without the engine: what Godot will
// be told (class, members, types) against the class reference XML, the
// defaults the docs state against the netcode packages, and the addon's
// files against build.sh.

// member is one declared member as Describe prints it.
type member struct {
	kind, name string
	args       []string // "name: Type"
	ret        string
	readOnly   bool
	getter     string // properties
}

var (
	reProp   = regexp.MustCompile(`^  property (\w+): ([\w.]+).* get (\w+)( set (\w+))?$`)
	reMethod = regexp.MustCompile(`^  method (\w+)\((.*)\)( -> ([\w.]+))?( const)?$`)
	reSignal = regexp.MustCompile(`^  signal (\w+)\((.*)\)$`)
	reConst  = regexp.MustCompile(`^  const (\w+) = (-?\d+)`)
)

// declared parses Describe's output: properties, methods (without the
// property accessors), signals and constants.
func declared(t *testing.T, describe string) map[string]member {
	t.Helper()
	out := map[string]member{}
	accessors := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(describe))
	var methods []member
	for sc.Scan() {
		line := sc.Text()
		if m := reProp.FindStringSubmatch(line); m != nil {
			out["property "+m[1]] = member{kind: "property", name: m[1], ret: m[2], readOnly: m[5] == "", getter: m[3]}
			accessors[m[3]] = true
			if m[5] != "" {
				accessors[m[5]] = true
			}
		} else if m := reMethod.FindStringSubmatch(line); m != nil {
			methods = append(methods, member{kind: "method", name: m[1], args: splitArgs(m[2]), ret: m[4]})
		} else if m := reSignal.FindStringSubmatch(line); m != nil {
			out["signal "+m[1]] = member{kind: "signal", name: m[1], args: splitArgs(m[2])}
		} else if m := reConst.FindStringSubmatch(line); m != nil {
			out["constant "+m[1]] = member{kind: "constant", name: m[1], ret: m[2]}
		}
	}
	for _, m := range methods {
		if !accessors[m.name] {
			out["method "+m.name] = m
		}
	}
	return out
}

func splitArgs(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ", ")
}

// classDoc is the part of Godot's doc XML the tests read.
type classDoc struct {
	Name     string `xml:"name,attr"`
	Inherits string `xml:"inherits,attr"`
	Brief    string `xml:"brief_description"`
	Desc     string `xml:"description"`
	Methods  []struct {
		Name   string `xml:"name,attr"`
		Return struct {
			Type string `xml:"type,attr"`
			Enum string `xml:"enum,attr"`
		} `xml:"return"`
		Params []docParam `xml:"param"`
		Desc   string     `xml:"description"`
	} `xml:"methods>method"`
	Members []struct {
		Name    string `xml:"name,attr"`
		Type    string `xml:"type,attr"`
		Setter  string `xml:"setter,attr"`
		Getter  string `xml:"getter,attr"`
		Enum    string `xml:"enum,attr"`
		Default string `xml:"default,attr"`
		Text    string `xml:",chardata"`
	} `xml:"members>member"`
	Signals []struct {
		Name   string     `xml:"name,attr"`
		Params []docParam `xml:"param"`
		Desc   string     `xml:"description"`
	} `xml:"signals>signal"`
	Constants []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
		Text  string `xml:",chardata"`
	} `xml:"constants>constant"`
}

type docParam struct {
	Name    string `xml:"name,attr"`
	Type    string `xml:"type,attr"`
	Enum    string `xml:"enum,attr"`
	Default string `xml:"default,attr"`
}

// typeOf is the type Describe prints: the enum for an int typed with one.
func typeOf(typ, enum string) string {
	if enum != "" {
		return enum
	}
	return typ
}

func params(ps []docParam) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		a := p.Name + ": " + typeOf(p.Type, p.Enum)
		if p.Default != "" {
			a += " = " + p.Default
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// documented returns the members the XML describes, with their signature.
func documented(t *testing.T, d classDoc) map[string]member {
	t.Helper()
	out := map[string]member{}
	text := func(kind, name, s string) {
		assert.NotEmpty(t, strings.TrimSpace(s), "%s %s has no description", kind, name)
	}
	for _, m := range d.Methods {
		ret := typeOf(m.Return.Type, m.Return.Enum)
		if ret == "void" {
			ret = ""
		}
		out["method "+m.Name] = member{kind: "method", name: m.Name, args: params(m.Params), ret: ret}
		text("method", m.Name, m.Desc)
	}
	for _, m := range d.Members {
		out["property "+m.Name] = member{kind: "property", name: m.Name, ret: typeOf(m.Type, m.Enum),
			readOnly: m.Setter == "", getter: m.Getter}
		text("property", m.Name, m.Text)
	}
	for _, s := range d.Signals {
		out["signal "+s.Name] = member{kind: "signal", name: s.Name, args: params(s.Params)}
		text("signal", s.Name, s.Desc)
	}
	for _, c := range d.Constants {
		out["constant "+c.Name] = member{kind: "constant", name: c.Name, ret: c.Value}
		text("constant", c.Name, c.Text)
	}
	return out
}

func TestClassDocs(t *testing.T) {
	cases := []struct {
		class, parent string
		describe      string
		err           error
		docs          string
	}{
		{"NetRoom", "Node", netRoomClass.Describe(), netRoomClass.Err(), netRoomDocs},
		{"NetPredictor", "Node", netPredictorClass.Describe(), netPredictorClass.Err(), netPredictorDocs},
	}
	for _, tc := range cases {
		t.Run(tc.class, func(t *testing.T) {
			require.NoError(t, tc.err, "the declaration registers")
			var d classDoc
			require.NoError(t, xml.Unmarshal([]byte(tc.docs), &d))
			assert.Equal(t, tc.class, d.Name)
			assert.Equal(t, tc.parent, d.Inherits)
			assert.NotEmpty(t, strings.TrimSpace(d.Brief))
			assert.NotEmpty(t, strings.TrimSpace(d.Desc))
			decl, doc := declared(t, tc.describe), documented(t, d)
			require.NotEmpty(t, decl)
			for key, m := range decl {
				dm, ok := doc[key]
				if !assert.True(t, ok, "%s is not documented", key) {
					continue
				}
				assert.Equal(t, m, dm, "%s: the docs and the declaration differ", key)
			}
			for key := range doc {
				_, ok := decl[key]
				assert.True(t, ok, "%s is documented but not declared", key)
			}
		})
	}
}

// TestDocumentedDefaults: the defaults the class reference states are the
// netcode packages' (which the nodes' Init copies).
func TestDocumentedDefaults(t *testing.T) {
	var d classDoc
	require.NoError(t, xml.Unmarshal([]byte(netPredictorDocs), &d))
	defaults := map[string]string{}
	for _, m := range d.Members {
		defaults[m.Name] = m.Default
	}
	p := predict.DefaultConfig(false)
	vehicleCap, vehicleTau, _ := entity.ProfileVehicle.Preset()
	want := map[string]float64{
		"prediction_cap_ms": ms(p.PredictionCap),
		"coast_until_ms":    ms(p.CoastUntil),
		"ghost_after_ms":    ms(p.GhostAfter),
		"hide_after_ms":     ms(p.HideAfter),
		"smoothing_tau_ms":  ms(p.SmoothingTau),
		"contact_trust_ms":  ms(p.ContactTrust),
		"path_margin_ms":    ms(p.PathMargin),
		"direct_outage_ms":  ms(p.DirectOutage),
		"send_rate":         sender.DefaultRate,
		"motion_profile":    float64(entity.DefaultProfile),
	}
	assert.Equal(t, vehicleCap, p.PredictionCap, "the default profile is the predictor's default")
	assert.Equal(t, vehicleTau, p.SmoothingTau)
	for name, v := range want {
		got, err := strconv.ParseFloat(defaults[name], 64)
		if assert.NoError(t, err, name) {
			assert.Equal(t, v, got, name)
		}
	}
	// Every duration of docs/architecture.md §4 is a property.
	for _, name := range []string{"prediction_cap_ms", "coast_until_ms", "ghost_after_ms", "hide_after_ms",
		"smoothing_tau_ms", "contact_trust_ms", "path_margin_ms", "direct_outage_ms"} {
		_, ok := defaults[name]
		assert.True(t, ok, name)
	}
	assert.Equal(t, 300*time.Millisecond, fromMs(300))
}

// TestAddonFiles: the .gdextension names the entry symbol, the libraries
// build.sh makes and the icons that exist.
func TestAddonFiles(t *testing.T) {
	const addon = "../godot_project/addons/nearzero"
	b, err := os.ReadFile(filepath.Join(addon, "nearzero.gdextension"))
	require.NoError(t, err)
	ext := parseINI(string(b))
	assert.Equal(t, `"nearzero_init"`, ext["configuration"]["entry_symbol"])
	assert.Equal(t, `"4.4"`, ext["configuration"]["compatibility_minimum"])
	assert.Equal(t, "false", ext["configuration"]["reloadable"])

	build, err := os.ReadFile("../build.sh")
	require.NoError(t, err)
	assert.Contains(t, string(build), "ADDON_BIN=godot_project/addons/nearzero/bin")
	libs := map[string]string{
		"linux.x86_64":   "libnearzero.linux.x86_64.so",
		"linux.arm64":    "libnearzero.linux.arm64.so",
		"windows.x86_64": "nearzero.windows.x86_64.dll",
		"macos.arm64":    "libnearzero.macos.arm64.dylib",
		"macos.x86_64":   "libnearzero.macos.x86_64.dylib",
	}
	for feature, file := range libs {
		assert.Equal(t, `"res://addons/nearzero/bin/`+file+`"`, ext["libraries"][feature], feature)
	}
	for _, class := range []string{"NetRoom", "NetPredictor"} {
		path := iconPath(class)
		assert.Equal(t, `"`+path+`"`, ext["icons"][class])
		_, err := os.Stat(filepath.Join("..", "godot_project", strings.TrimPrefix(path, "res://")))
		assert.NoError(t, err, "icon of %s", class)
	}
}

// parseINI reads Godot's config format: [section] then key = value.
func parseINI(s string) map[string]map[string]string {
	out := map[string]map[string]string{}
	section := ""
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
			out[section] = map[string]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if ok && out[section] != nil {
				out[section][strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return out
}
