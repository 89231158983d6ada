package version_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/version"
	"github.com/nearzero/nearzero/netcode/wire"
)

// semver splits a version into its numbers.
func semver(t *testing.T, v string) (major, minor, patch int) {
	t.Helper()
	m := regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)$`).FindStringSubmatch(v)
	require.NotNil(t, m, "%q is not MAJOR.MINOR.PATCH", v)
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	patch, _ = strconv.Atoi(m[3])
	return
}

// TestVersionFollowsTheProtocol: the release says which protocol and rules
// it speaks, and a new protocol or rules version is a new minor release
// before 1.0 (a new major after): two builds that cannot play together
// never share a minor. Before, every build said 0.2.0 while the protocol
// went from 2 to 4.
func TestVersionFollowsTheProtocol(t *testing.T) {
	require.NotEmpty(t, version.Releases)
	last := version.Releases[len(version.Releases)-1]
	assert.Equal(t, version.Version, last.Version, "Version is the newest release")
	assert.Equal(t, wire.ProtocolVersion, last.Protocol, "bump the release with the protocol: add a row to Releases")
	assert.Equal(t, wire.RulesVersion, last.Rules, "bump the release with the rules: add a row to Releases")
	for i := 1; i < len(version.Releases); i++ {
		a, b := version.Releases[i-1], version.Releases[i]
		amaj, amin, _ := semver(t, a.Version)
		bmaj, bmin, _ := semver(t, b.Version)
		if a.Protocol == b.Protocol && a.Rules == b.Rules {
			assert.True(t, bmaj > amaj || bmaj == amaj && bmin >= amin, "%s after %s", b.Version, a.Version)
			continue
		}
		if amaj == 0 {
			assert.True(t, bmaj > 0 || bmin > amin, "%s speaks another protocol or rules than %s: a new minor", b.Version, a.Version)
		} else {
			assert.Greater(t, bmaj, amaj, "%s speaks another protocol or rules than %s: a new major", b.Version, a.Version)
		}
	}
}

// TestChangelogNamesEachRelease: CHANGELOG.md has a section per release
// with the protocol and rules it speaks, and upgrade notes for the newest.
func TestChangelogNamesEachRelease(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "CHANGELOG.md"))
	require.NoError(t, err)
	log := string(b)
	for _, r := range version.Releases {
		head := "## " + r.Version
		i := strings.Index(log, head)
		require.GreaterOrEqual(t, i, 0, "CHANGELOG.md has no %q", head)
		line := log[i : i+strings.IndexByte(log[i:], '\n')]
		assert.Contains(t, line, "protocol "+strconv.Itoa(int(r.Protocol)), line)
		assert.Contains(t, line, "rules "+strconv.Itoa(int(r.Rules)), line)
	}
	newest := log[strings.Index(log, "## "+version.Version):]
	assert.Contains(t, newest, "### Upgrading", "the newest release says how to upgrade")
}
