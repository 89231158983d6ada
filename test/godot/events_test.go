package godottest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGodotEvents runs two Godot processes in one room: a sends an event
// with every kind of argument events carry, a chat line, and sets two
// synced properties on its entity; b checks what arrived (types included),
// sends an event back to a alone, and gets a's answer.
func TestGodotEvents(t *testing.T) {
	bin := os.Getenv("GODOT")
	if bin == "" {
		t.Skip("skipped: GODOT is not set (a Godot 4.4+ editor binary)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	godotVersion(t, ctx, bin)
	root := buildAddon(t, ctx)
	g := &godot{t: t, bin: bin, project: filepath.Join(t.TempDir(), "project")}
	require.NoError(t, copyProject(filepath.Join(root, "godot_project"), g.project))
	g.env = isolatedEnv(t)
	g.importProject(ctx)

	url := startServer(t)
	dir := t.TempDir()
	peer := func(role string, extra ...string) []string {
		return append([]string{"--headless", "--path", g.project, "res://tests/events_peer.tscn", "--",
			"--nz-server=" + url, "--nz-role=" + role, "--nz-out=" + dir}, extra...)
	}
	actx, stopA := context.WithTimeout(ctx, 2*time.Minute)
	defer stopA()
	a := exec.CommandContext(actx, bin, peer("a")...)
	a.Env, a.WaitDelay = g.env, 10*time.Second
	var aOut lockedBuffer
	a.Stdout, a.Stderr = &aOut, &aOut
	require.NoError(t, a.Start())
	aDone := make(chan struct{})
	var aErr error
	go func() { aErr = a.Wait(); close(aDone) }()
	defer func() { stopA(); <-aDone }()

	code := waitFile(t, ctx, filepath.Join(dir, "code.txt"), time.Minute, aDone, &aOut)
	bOut, err := g.run(ctx, 2*time.Minute, peer("b", "--nz-code="+code)[3:]...)
	require.NoError(t, err, "b:\n%s\na:\n%s", tail(bOut, 40), tail(aOut.String(), 40))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644))
	select {
	case <-aDone:
		assert.NoError(t, aErr, "a exits cleanly:\n%s", tail(aOut.String(), 40))
	case <-time.After(30 * time.Second):
		t.Errorf("a did not stop within 30 s:\n%s", tail(aOut.String(), 40))
	}

	raw, err := os.ReadFile(filepath.Join(dir, "b.json"))
	require.NoError(t, err, "b:\n%s", tail(bOut, 40))
	var got struct {
		Events [][]any `json:"events"`
		Chat   [][]any `json:"chat"`
		Props  []any   `json:"props"`
		Errors []any   `json:"errors"`
		Types  []any   `json:"types"`
		Values []any   `json:"values"`
		Typed  [][]any `json:"typed"`
	}
	require.NoError(t, json.Unmarshal(raw, &got))
	t.Logf("b got: %s", raw)
	require.Len(t, got.Events, 3, "hello, typed, then echoed")
	assert.Equal(t, []any{0.0, "hello"}, got.Events[0][:2])
	// Every argument arrives as the type it left as (protocol 3).
	assert.Equal(t, []any{"int", "float", "String", "Vector2", "Vector3", "Color", "Dictionary", "Vector2i", "Dictionary",
		"PackedFloat32Array", "StringName", "Transform3D"}, got.Types)
	assert.Equal(t, []any{true, true, true, true, true, true}, got.Values, "values equal to those sent")
	assert.Equal(t, []any{0.0, "echoed", []any{42.0, "back"}}, got.Events[2])
	// Every type issue 22 lists keeps its type and value (docs/protocol.md,
	// Typed arguments): [sent type, arrived type, equal].
	require.Len(t, got.Typed, 22, "one row per type")
	for _, row := range got.Typed {
		t.Logf("typed argument: sent %v, arrived %v, equal %v", row[0], row[1], row[2])
		assert.Equal(t, row[0], row[1], "type kept")
		assert.Equal(t, true, row[2], "%v: value kept", row[0])
	}
	assert.Equal(t, [][]any{{0.0, "hi there"}}, got.Chat, "sanitised")
	assert.Equal(t, []any{"hp=75", 7.0}, got.Props, "synced properties applied on b's copy of a")
	assert.Empty(t, got.Errors)
	assert.Contains(t, aOut.String(), "room_error 0 send_event \"bad\"", "an Object argument is refused on a:\n%s", tail(aOut.String(), 20))
	// Ints stay ints and floats floats: GDScript's str() of b's args
	// shows the first ones so.
	assert.Contains(t, bOut, "event 0 hello [1, 2.5, \"x\", ")
}
