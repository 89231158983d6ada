package godot

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The engine versions the addon loads on (compatibility_minimum is 4.4).
var engineVersions = []version{{4, 4}, {4, 5}, {4, 6}, {4, 7}}

type version struct{ major, minor int }

func (v version) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }

func (v version) less(o version) bool {
	return v.major < o.major || v.major == o.major && v.minor < o.minor
}

func parseVersion(t *testing.T, s string) version {
	t.Helper()
	var v version
	_, err := fmt.Sscanf(s, "%d.%d", &v.major, &v.minor)
	require.NoError(t, err, s)
	return v
}

// interfaceRow is a row of testdata/interface_functions.json.
type interfaceRow struct {
	Name, Since, Deprecated string
}

// loadedFn is an interface function gdx.c loads on versions [from, until).
type loadedFn struct {
	name        string
	from, until version
}

var (
	reAtLeast = regexp.MustCompile(`if \(at_least\((\d+), (\d+)\)\) \{$`)
	reLoad    = regexp.MustCompile(`LOAD\(\w+, "(\w+)"\)`)
)

// loadedFunctions reads load_interface in gdx.c: every LOAD and the
// at_least branches around it (the nested if/else blocks there).
func loadedFunctions(t *testing.T) []loadedFn {
	t.Helper()
	b, err := os.ReadFile("gdx.c")
	require.NoError(t, err)
	src := string(b)
	start := strings.Index(src, "static int load_interface(void) {")
	require.GreaterOrEqual(t, start, 0)
	type frame struct{ from, until, split version }
	always := frame{from: version{0, 0}, until: version{99, 0}}
	stack := []frame{always}
	var out []loadedFn
	for _, line := range strings.Split(src[start:], "\n")[1:] {
		line = strings.TrimSpace(line)
		top := stack[len(stack)-1]
		switch {
		case line == "}" && len(stack) == 1:
			require.NotEmpty(t, out)
			return out // the end of load_interface
		case reAtLeast.MatchString(line):
			m := reAtLeast.FindStringSubmatch(line)
			var v version
			fmt.Sscanf(m[1]+"."+m[2], "%d.%d", &v.major, &v.minor)
			f := frame{from: top.from, until: top.until, split: v}
			if top.from.less(v) {
				f.from = v
			}
			stack = append(stack, f)
		case line == "} else {":
			f := stack[len(stack)-1]
			parent := stack[len(stack)-2]
			require.NotZero(t, f.split, "an else of a block that is no at_least")
			stack[len(stack)-1] = frame{from: parent.from, until: f.split}
		case strings.HasSuffix(line, "{"):
			stack = append(stack, frame{from: top.from, until: top.until})
		case line == "}" || strings.HasPrefix(line, "} while"):
			stack = stack[:len(stack)-1]
		}
		if m := reLoad.FindStringSubmatch(line); m != nil {
			out = append(out, loadedFn{name: m[1], from: top.from, until: top.until})
		}
	}
	t.Fatal("no end of load_interface in gdx.c")
	return nil
}

// TestInterfaceFunctionsPerVersion: on every engine version the addon
// supports, each interface function the library loads exists there and
// is not deprecated there (an engine built without deprecated APIs lacks
// those, and would refuse the library).
func TestInterfaceFunctionsPerVersion(t *testing.T) {
	b, err := os.ReadFile("../testdata/interface_functions.json")
	require.NoError(t, err)
	var data struct{ Functions []interfaceRow }
	require.NoError(t, json.Unmarshal(b, &data))
	rows := map[string]interfaceRow{}
	for _, r := range data.Functions {
		rows[r.Name] = r
	}
	fns := loadedFunctions(t)
	for _, v := range engineVersions {
		t.Run(v.String(), func(t *testing.T) {
			n := 0
			for _, f := range fns {
				if v.less(f.from) || !v.less(f.until) {
					continue
				}
				n++
				r, ok := rows[f.name]
				if !assert.True(t, ok, "%s is not in testdata/interface_functions.json", f.name) {
					continue
				}
				assert.False(t, v.less(parseVersion(t, r.Since)), "%s: loaded on %s, added in %s", f.name, v, r.Since)
				if r.Deprecated != "" {
					assert.True(t, v.less(parseVersion(t, r.Deprecated)),
						"%s: loaded on %s, deprecated since %s", f.name, v, r.Deprecated)
				}
			}
			assert.Greater(t, n, 40, "load_interface read")
		})
	}

	// The version query comes before the version is known: it asks for
	// get_godot_version, which every build of 4.4 to 4.7 with deprecated
	// APIs has (all official ones), and get_godot_version2 only when it is
	// missing (builds without deprecated APIs, 4.5 and later).
	b, err = os.ReadFile("gdx.c")
	require.NoError(t, err)
	lv := string(b)[strings.Index(string(b), "static void load_version(void)"):]
	lv = lv[:strings.Index(lv, "\n}\n")]
	i1, i2 := strings.Index(lv, `get_proc("get_godot_version")`), strings.Index(lv, `get_proc("get_godot_version2")`)
	require.True(t, i1 >= 0 && i2 > i1, "load_version asks for get_godot_version, then get_godot_version2")
	assert.Equal(t, "4.5", rows["get_godot_version2"].Since, "the fallback exists wherever the first can be missing")
	assert.Equal(t, "4.5", rows["get_godot_version"].Deprecated)
}

// TestMethodHashesPerVersion: on every version, each engine method row
// calls the hash that version registers natively (a compatibility hash is
// missing from builds without deprecated APIs). The rows are 4.6's with
// the 4.4 and 4.7 signatures of the methods that changed (see the
// testdata's _source).
func TestMethodHashesPerVersion(t *testing.T) {
	rows := loadAPIRows(t)
	type key struct{ class, method string }
	native := map[key]func(version) uint32{}
	for _, r := range rows.Methods {
		native[key{r.Class, r.Method}] = func(v version) uint32 {
			switch {
			case v == version{4, 4} && r.Hash44 != 0:
				return r.Hash44
			case !v.less(version{4, 7}) && r.Hash47 != 0:
				return r.Hash47
			}
			return r.Hash
		}
	}
	for _, v := range engineVersions {
		for _, m := range methodTable {
			want, ok := native[key{m.Class, m.Method}]
			if !assert.True(t, ok, "%s.%s has no row", m.Class, m.Method) {
				continue
			}
			used := m.Hash
			if m.NewHash != 0 && !v.less(version{m.NewSince[0], m.NewSince[1]}) {
				used = m.NewHash
			}
			assert.Equal(t, want(v), used, "%s.%s on %s", m.Class, m.Method, v)
		}
	}
}

func TestQuitsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--headless", "--path", ".", "--import"}, true},
		{[]string{"--editor", "--quit"}, true},
		{[]string{"--editor", "--quit-after", "600"}, true},
		{[]string{"--headless", "--export-release", "Linux", "out/game"}, true},
		{[]string{"--editor", "--path", "."}, false},
		{[]string{"--path", ".", "--", "--import"}, false}, // the game's own arguments
		{nil, false},
		{[]string{"--import"}, true},
	} {
		assert.Equal(t, tc.want, quitsAtOnce(append([]string{"godot"}, tc.args...)), "%q", tc.args)
	}
}
