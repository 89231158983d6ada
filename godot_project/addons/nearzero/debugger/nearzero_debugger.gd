@tool
extends EditorDebuggerPlugin
## Receives the samples a running game's NetRooms send ("nearzero:sample",
## ten a second) and shows them in a "nearzero" tab of each debugger
## session (one per game instance run from the editor).

const NearzeroPanel := preload("res://addons/nearzero/debugger/panel.gd")

var _panels := {} # session id -> panel


func _has_capture(capture: String) -> bool:
	return capture == "nearzero"


func _capture(message: String, data: Array, session_id: int) -> bool:
	if message != "nearzero:sample" or data.is_empty() or not data[0] is Dictionary:
		return false
	var panel = _panels.get(session_id)
	if panel != null:
		panel.add_sample(data[0])
	return true


func _setup_session(session_id: int) -> void:
	var panel := NearzeroPanel.new()
	panel.name = "nearzero"
	_panels[session_id] = panel
	var session := get_session(session_id)
	session.started.connect(panel.on_started)
	session.stopped.connect(panel.on_stopped)
	session.add_session_tab(panel)


## The panel of a session (for tests and tools): null when there is none.
func get_panel(session_id: int = 0) -> Control:
	return _panels.get(session_id)
