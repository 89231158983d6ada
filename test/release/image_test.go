package release

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/server"
)

// closeMargin is what the server takes after the drain grace at most:
// nearzero-server's serve gives Drain the grace plus 30 s, then Shutdown
// 5 s.
const closeMargin = 35 * time.Second

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, ...
	args string
}

// parseDockerfile returns the instructions and the comment text.
func parseDockerfile(t *testing.T, b []byte) (ins []instruction, comments string) {
	t.Helper()
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			comments += line + "\n"
			continue
		}
		if line == "" && cur.Len() == 0 {
			continue
		}
		if more, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(strings.TrimSpace(cur.String()), " ")
		ins = append(ins, instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	require.NoError(t, sc.Err())
	require.Zero(t, cur.Len(), "no dangling continuation")
	return ins, comments
}

// TestDockerfile checks the server image's recipe, since no container
// engine runs here: multi-stage, a static (CGO_ENABLED=0) build of the
// server, a non-root user, the database on a volume, a HEALTHCHECK that
// needs no curl, SIGTERM, and a documented stop grace period that covers
// the drain.
func TestDockerfile(t *testing.T) {
	ins, comments := parseDockerfile(t, readRepo(t, "Dockerfile"))
	var froms []int
	for i, in := range ins {
		if in.cmd == "FROM" {
			froms = append(froms, i)
		}
	}
	require.GreaterOrEqual(t, len(froms), 2, "multi-stage")
	build, final := ins[froms[0]:froms[1]], ins[froms[len(froms)-1]:]
	find := func(stage []instruction, cmd string) []string {
		var out []string
		for _, in := range stage {
			if in.cmd == cmd {
				out = append(out, in.args)
			}
		}
		return out
	}

	// The builder's Go is go.mod's.
	gomod := string(readRepo(t, "go.mod"))
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(gomod)
	require.NotNil(t, m, "go.mod's go line")
	assert.Contains(t, find(ins[:froms[0]], "ARG"), "GO_VERSION="+m[1], "the builder's Go is go.mod's %s", m[1])
	assert.Contains(t, ins[froms[0]].args, "golang:${GO_VERSION}")

	runs := strings.Join(find(build, "RUN"), "\n")
	assert.Contains(t, runs, "CGO_ENABLED=0 go build", "a static build")
	assert.Contains(t, runs, "./server/cmd/nearzero-server")

	users := find(final, "USER")
	require.Len(t, users, 1, "the final stage sets its user")
	assert.NotContains(t, []string{"root", "0", "0:0", "root:root"}, users[0], "not root")

	require.Len(t, find(final, "VOLUME"), 1)
	assert.Contains(t, find(final, "VOLUME")[0], "/data")
	entry := strings.Join(find(final, "ENTRYPOINT"), " ")
	assert.Contains(t, entry, `"-db", "/data/nearzero.db"`, "the database is on the volume")
	assert.Contains(t, entry, `"-addr", ":8787"`, "listens on every interface of the container")
	assert.Contains(t, find(final, "EXPOSE"), "8787")
	assert.Contains(t, find(final, "EXPOSE"), "8787/udp", "the datagram path's UDP port")
	assert.Equal(t, []string{"SIGTERM"}, find(final, "STOPSIGNAL"))

	hc := find(final, "HEALTHCHECK")
	require.Len(t, hc, 1)
	assert.Contains(t, hc[0], `CMD ["/usr/local/bin/nearzero-server", "-healthcheck", "-addr", ":8787"]`,
		"the server probes itself (the base image has no curl)")
	assert.Contains(t, strings.Join(find(final, "COPY"), "\n"), "/usr/local/bin/nearzero-server")

	// The documented stop grace period covers the default drain grace and
	// the closing after it, in the Dockerfile and in the README.
	readme := string(readRepo(t, "README.md"))
	for name, text := range map[string]string{"Dockerfile": comments, "README.md": readme} {
		m := regexp.MustCompile(`--stop-timeout (\d+)`).FindStringSubmatch(text)
		if assert.NotNil(t, m, "%s documents docker run --stop-timeout", name) {
			s, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			assert.GreaterOrEqual(t, time.Duration(s)*time.Second, server.DefaultDrainGrace+closeMargin,
				"%s: --stop-timeout %d covers -drain-grace %s plus %s", name, s, server.DefaultDrainGrace, closeMargin)
		}
	}
}

// TestDockerignoreKeepsTheSources checks that .dockerignore leaves in the
// build context everything the server's build needs.
func TestDockerignoreKeepsTheSources(t *testing.T) {
	var patterns []string
	for _, l := range strings.Split(string(readRepo(t, ".dockerignore")), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}
	ctx, cancel := commandContext(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}",
		"./server/cmd/nearzero-server")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	needed := []string{"go.mod", "go.sum"}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		require.NoError(t, err)
		needed = append(needed, filepath.ToSlash(rel))
	}
	require.Greater(t, len(needed), 3)
	for _, p := range needed {
		// A pattern excludes a path when it matches it or a folder above it.
		parts := strings.Split(p, "/")
		for i := range parts {
			prefix := strings.Join(parts[:i+1], "/")
			for _, pat := range patterns {
				ok, err := filepath.Match(strings.TrimPrefix(pat, "/"), prefix)
				require.NoError(t, err, pat)
				assert.False(t, ok, ".dockerignore %q leaves out %s, which the server's build needs", pat, p)
			}
		}
	}
	assert.True(t, slices.Contains(patterns, ".git"), "the context leaves out .git")
}

// TestServerBinaryIsStatic builds the server as the Dockerfile does and
// checks that it is a static executable (no interpreter, no dynamic
// section), so it runs on a distroless/static base.
func TestServerBinaryIsStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("skipped: reads an ELF binary; this is %s", runtime.GOOS)
	}
	f, err := elf.Open(buildServer(t))
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, elf.ET_EXEC, f.Type, "an executable, not position-independent with a loader")
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "no program interpreter")
		assert.NotEqual(t, elf.PT_DYNAMIC, p.Type, "no dynamic section")
	}
	assert.Nil(t, f.Section(".interp"))
	assert.Nil(t, f.Section(".dynamic"))
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	assert.Empty(t, libs)
}
