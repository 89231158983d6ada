package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The READMEs are where a Godot developer learns the nodes' API; a name
// there that the classes do not register sends them chasing an error.

// readmes are the documents checked, relative to this package.
var readmes = []string{"../README.md", "../godot_project/addons/nearzero/README.md"}

// reCode finds inline code spans and fenced blocks.
var reCode = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```|`([^`\n]+)`")

// reMemberRef finds a member reached through an expression that names a
// NetRoom or a NetPredictor: NetRoom.x, room.x, net_room.x, $NetPredictor.x,
// predictor.x, $Ball/NetPredictor.x.
var reMemberRef = regexp.MustCompile(`(?:\bNetRoom|\bNetPredictor|\$[A-Za-z/]*NetPredictor|\bnet_room|\broom|\bpredictor|\bpred)\.([a-z_][a-z0-9_]*)`)

// reSnake finds snake_case words (one underscore at least) in the addon
// README's code: names a user would type.
var reSnake = regexp.MustCompile(`\b_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)

// notMembers are snake_case names the addon README uses that belong to
// Godot, GDScript, the server or the demo, not to NetRoom or NetPredictor.
var notMembers = []string{
	// Godot and GDScript
	"_physics_process", "_process", "_ready", "_enter_tree", "_exit_tree", "move_and_slide", "get_vector",
	"queue_free", "create_client", "create_server", "global_position", "global_transform", "physics_ticks_per_second",
	"process_thread_group", "process_mode", "process_priority", "time_scale", "physics_interpolation", "reset_physics_interpolation",
	"get_tree", "change_scene_to_file", "add_child", "get_node", "multiplayer_peer", "freeze_mode",
	"linear_velocity", "push_error", "push_warning", "print_rich", "ui_left", "ui_right", "ui_up", "ui_down",
	"compatibility_minimum", "entry_symbol", "extension_list", "extension_api", "main_scene", "get_image",
	"get_texture", "get_viewport", "save_png", "rendering_driver", "quit_after", "add_custom_monitor",
	"is_inside_tree", "set_multiplayer_authority", "is_multiplayer_authority", "get_unique_id",
	"peer_connected", "peer_disconnected", "spawn_function", "replication_config", "root_path",
	// the GDExtension interface and engine methods the library calls
	"classdb_register_extension_class6", "classdb_construct_object3", "is_class", "set_name",
	"rpc_id", "call_local", "call_remote", "add_spawnable_scene", "set_visibility_for", "any_peer", "unreliable_ordered", "get_remote_sender_id",
	"get_multiplayer_authority", "get_peers", "is_server", "connected_to_server",
	"server_disconnected", "connection_failed", "public_visibility", "delta_interval", "replication_interval",
	// the server, the build, the demo and the bench
	"build_sh", "nearzero_init", "_nearzero_init", "lan_address", "host_ip", "target_slot", "drawn_hit_point", "muzzle", "from_slot",
	"owner_slot", "delay_ms", "go_allocations", "top_speed", "spawn_radius", "claim_radius",
	"godot_project", "godot_stack", "x86_64", "bench_predictors", "physics_interpolation_mode",
	// the README's own example code
	"net_room", "_on_touch", "try_pick_up", "item_id", "pick_up", "picked_up", "give_item", "_on_event_received",
	"door_opened", "next_time", "next_phase_time", "start_countdown", "show_full",
	"get_axis", "max_players", "show_banner", "_on_goal", "editor_plugins", "send_message", "is_active",
	"two_players", "_on_start", "_on_point", "paddle_hit", "ball_speed", "max_clients",
}

// classNames returns every name NetRoom and NetPredictor register:
// properties, their accessors, methods and signals.
func classNames(t *testing.T) (all map[string]bool, signals []string) {
	t.Helper()
	all = map[string]bool{}
	for _, d := range []string{netRoomClass.Describe(), netPredictorClass.Describe()} {
		for _, line := range strings.Split(d, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			name := strings.TrimSuffix(strings.SplitN(f[1], "(", 2)[0], ":")
			switch f[0] {
			case "property":
				all[name] = true
				for i, w := range f {
					if (w == "get" || w == "set") && i+1 < len(f) {
						all[f[i+1]] = true
					}
				}
			case "method":
				all[name] = true
			case "signal":
				all[name] = true
				signals = append(signals, name)
			}
		}
	}
	require.NotEmpty(t, signals)
	return all, signals
}

// codeOf returns the code spans and blocks of a Markdown text, joined.
func codeOf(md string) string {
	var b strings.Builder
	for _, m := range reCode.FindAllStringSubmatch(md, -1) {
		b.WriteString(m[1])
		b.WriteString(m[2])
		b.WriteString("\n")
	}
	return b.String()
}

// TestReadmesNameRegisteredMembers: every NetRoom/NetPredictor member the
// READMEs name is registered, and every signal is named in the addon
// README.
func TestReadmesNameRegisteredMembers(t *testing.T) {
	names, signals := classNames(t)
	for _, path := range readmes {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		code := codeOf(string(b))
		for _, m := range reMemberRef.FindAllStringSubmatch(code, -1) {
			assert.True(t, names[m[1]], "%s names %q on a NetRoom or NetPredictor, which neither class registers", path, m[0])
		}
	}

	b, err := os.ReadFile(readmes[1])
	require.NoError(t, err)
	addon := string(b)
	for _, w := range reSnake.FindAllString(codeOf(addon), -1) {
		if names[w] || slices.Contains(notMembers, w) || strings.HasPrefix(w, "nz_") {
			continue
		}
		assert.Fail(t, "unknown name in the addon README",
			"%q is neither a NetRoom/NetPredictor member nor listed in notMembers (a renamed or removed member?)", w)
	}
	for _, s := range signals {
		assert.True(t, strings.Contains(addon, "`"+s+"`") || strings.Contains(addon, s+"("),
			"the addon README does not name the signal %s", s)
	}
}
