package godottest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newUserGame is a game written the way a port from Godot's multiplayer
// goes: the player scene is set only after the lobby, a motionless scene
// (no NetPredictor) is spawned, an event runs on every machine including
// the sender's (call_local) with typed arguments, and the game quits with
// the room still open.
const newUserGame = `extends Node

var room: NetRoom
var role := ""
var dir := ""
var seen := {}

func _ready() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--nz-role="):
			role = a.substr(10)
		elif a.begins_with("--nz-dir="):
			dir = a.substr(9)
	room = NetRoom.new()
	room.server_address = OS.get_environment("NZ_SERVER")
	room.spawnable_scenes = ["res://still.tscn"]
	add_child(room)
	room.room_joined.connect(_on_joined)
	room.player_joined.connect(_on_player_joined)
	room.player_spawned.connect(func(slot, node): _mark("player_spawned"))
	room.entity_spawned.connect(_on_entity_spawned)
	room.event_received.connect(_on_event)
	room.room_error.connect(func(code, message): print("NZ_ROOM_ERROR ", code, " ", message))
	if role == "host":
		room.create_room()
		return
	var path := dir + "/code"
	while not FileAccess.file_exists(path):
		await get_tree().create_timer(0.1).timeout
	room.join_room(FileAccess.get_file_as_string(path).strip_edges())

func _on_joined(code: String, slot: int) -> void:
	if role == "host":
		FileAccess.open(dir + "/code.tmp", FileAccess.WRITE).store_string(code)
		DirAccess.rename_absolute(dir + "/code.tmp", dir + "/code")
	else:
		# After the lobby: the players already in the room are spawned now.
		room.player_scene = load("res://player.tscn")

func _on_player_joined(slot: int, name: String) -> void:
	if role != "host" or slot == room.local_slot:
		return
	room.player_scene = load("res://player.tscn")
	room.spawn_entity("res://still.tscn", [Vector2i(3, 4)])
	room.send_event_all("typed", [Vector2(1.5, 2), Vector3i(1, 2, 3), Color(0.25, 0.5, 0.75, 1),
		{1: "one", "k": 2}, PackedInt32Array([7, 8]), &"tag", Transform2D.IDENTITY])

func _on_entity_spawned(node: Node, slot: int, args: Array) -> void:
	print("NZ_ENTITY ", node.get_class(), " ", type_string(typeof(args[0])), " ", args[0])
	_mark("entity")

func _on_event(from_slot: int, name: String, args: Array) -> void:
	var types := []
	for a in args:
		types.append(type_string(typeof(a)))
	print("NZ_EVENT from=", from_slot, " mine=", from_slot == room.local_slot, " types=", ",".join(types),
		" keys=", ",".join(args[3].keys().map(func(k): return type_string(typeof(k)))))
	_mark("event")

func _mark(what: String) -> void:
	seen[what] = true
	var want := ["event", "player_spawned"] if role == "host" else ["event", "player_spawned", "entity"]
	for w in want:
		if not seen.has(w):
			return
	print("NZ_DONE ", role)
	await get_tree().create_timer(1.0).timeout
	get_tree().quit() # with the room open
`

// TestGodotNewUserPath: two processes play newUserGame in a fresh project;
// both finish, every argument arrives with its type (the sender's own
// copy too), and neither prints an error.
func TestGodotNewUserPath(t *testing.T) {
	bin := godotBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	godotVersion(t, ctx, bin)
	root := buildAddon(t, ctx)
	dir := t.TempDir()
	env := append(isolatedEnv(t), "NZ_SERVER="+startServer(t))
	project := freshProject(t, root, map[string]string{
		"main.gd":   newUserGame,
		"main.tscn": "[gd_scene load_steps=2 format=3]\n\n[ext_resource type=\"Script\" path=\"res://main.gd\" id=\"1\"]\n\n[node name=\"Main\" type=\"Node\"]\nscript = ExtResource(\"1\")\n",
		"player.tscn": "[gd_scene format=3]\n\n[node name=\"Player\" type=\"Node2D\"]\n\n" +
			"[node name=\"NetPredictor\" type=\"NetPredictor\" parent=\".\"]\n",
		"still.tscn":    "[gd_scene format=3]\n\n[node name=\"Crate\" type=\"Node2D\"]\n",
		"project.godot": "run/main_scene=\"res://main.tscn\"\n",
	})
	out, code := godotRun(t, ctx, env, 3*time.Minute, bin, "--headless", "--path", project, "--import")
	requireClean(t, "the first --import", out, code)

	host := exec.CommandContext(ctx, bin, "--headless", "--path", project, "--", "--nz-role=host", "--nz-dir="+dir)
	host.Env, host.WaitDelay = env, 10*time.Second
	var hostOut lockedBuffer
	host.Stdout, host.Stderr = &hostOut, &hostOut
	require.NoError(t, host.Start())
	hostDone := make(chan error, 1)
	go func() { hostDone <- host.Wait() }()

	joinOut, joinCode := godotRun(t, ctx, env, 2*time.Minute, bin, "--headless", "--path", project, "--",
		"--nz-role=join", "--nz-dir="+dir)
	var hostErr error
	select {
	case hostErr = <-hostDone:
	case <-time.After(time.Minute):
		_ = host.Process.Kill()
		hostErr = <-hostDone
	}
	t.Logf("host:\n%s\njoiner:\n%s", tail(hostOut.String(), 15), tail(joinOut, 15))
	require.NoError(t, hostErr, "the host exits by itself, cleanly")
	requireClean(t, "the joiner", joinOut, joinCode)
	for name, o := range map[string]string{"host": hostOut.String(), "joiner": joinOut} {
		assert.Contains(t, o, "NZ_DONE", "%s finished", name)
		assert.NotContains(t, o, "ERROR", "%s printed an error", name)
		assert.NotContains(t, o, "NZ_ROOM_ERROR", name)
		ev := regexp.MustCompile(`NZ_EVENT from=\d+ mine=(\w+) types=(\S+) keys=(\S+)`).FindStringSubmatch(o)
		if assert.NotNil(t, ev, "%s got the event", name) {
			assert.Equal(t, "Vector2,Vector3i,Color,Dictionary,PackedInt32Array,StringName,Transform2D", ev[2], name)
			assert.Equal(t, "int,String", ev[3], "%s: the dictionary keeps its key types", name)
			assert.Equal(t, map[string]string{"host": "true", "joiner": "false"}[name], ev[1], "%s: call_local", name)
		}
	}
	assert.True(t, strings.Contains(joinOut, "NZ_ENTITY Node2D Vector2i (3, 4)"),
		"the joiner got the motionless scene with a typed argument:\n%s", tail(joinOut, 20))
	_, err := os.Stat(filepath.Join(dir, "code"))
	require.NoError(t, err)
}
