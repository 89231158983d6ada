@tool
extends EditorPlugin
## The addon's editor plugin: adds the nearzero tab to the Debugger panel.
## The nodes (NetRoom, NetPredictor) come from the GDExtension library and
## work whether this plugin is enabled or not; a game run from the editor
## sends its samples only while it is (Project > Project Settings > Plugins).

const NearzeroDebugger := preload("res://addons/nearzero/debugger/nearzero_debugger.gd")

var _debugger: EditorDebuggerPlugin


func _enter_tree() -> void:
	_debugger = NearzeroDebugger.new()
	add_debugger_plugin(_debugger)


func _exit_tree() -> void:
	remove_debugger_plugin(_debugger)
	_debugger = null
