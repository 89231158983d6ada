# One player of TestGodotCrashedHost (test/godot/friction_test.go):
#   --nz-role=host --nz-port=N --nz-out=DIR   hosts (host_local) and creates
#                                              a room; writes DIR/code.txt
#   --nz-role=join --nz-port=N --nz-code=C --nz-out=DIR
#                                              joins; writes DIR/joined once
#                                              in, and DIR/lost.txt ("reason
#                                              message") at its first
#                                              connection_error
# The test kills the host's process with SIGKILL: the joiner must hear of
# it as connection_error with a reason it can match on.
extends Node

var args := {}
var room: NetRoom


func _ready() -> void:
	for a in OS.get_cmdline_user_args():
		if a.begins_with("--nz-"):
			var kv := a.substr(5).split("=", true, 1)
			args[kv[0]] = kv[1] if kv.size() > 1 else ""
	room = NetRoom.new()
	room.direct_links = false
	add_child(room)
	var out: String = args.get("out", "")
	room.room_joined.connect(func(code, _slot): _write(out.path_join("code.txt" if args.role == "host" else "joined"), code))
	room.connection_error.connect(_on_connection_error)
	room.disconnected.connect(func(reason): print("NZ_CRASH: disconnected ", reason); get_tree().quit(0))
	if args.role == "host":
		room.host_local(int(args.port))
		room.create_room()
	else:
		room.server_address = "127.0.0.1:%s" % args.port
		room.join_room(args.code)


func _on_connection_error(reason: int, message: String) -> void:
	print("NZ_CRASH: connection_error %d %s" % [reason, message])
	var lost: String = args.get("out", "").path_join("lost.txt")
	if not FileAccess.file_exists(lost):
		_write(lost, "%d %s" % [reason, message])


func _write(path: String, text: String) -> void:
	var f := FileAccess.open(path, FileAccess.WRITE)
	f.store_string(text)
	f.close()
