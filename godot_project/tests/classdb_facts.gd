# Prints what ClassDB knows about the nearzero classes as one JSON line
# (prefixed NZ_FACTS=), then quits. Run by the GODOT integration test:
#   godot --headless --path godot_project --script res://tests/classdb_facts.gd
extends SceneTree

func _initialize() -> void:
	var facts := {
		"version": Engine.get_version_info(),
		"classes": {},
	}
	for cls in ["NetRoom", "NetPredictor"]:
		var info := {"exists": ClassDB.class_exists(cls)}
		if info.exists:
			info.parent = ClassDB.get_parent_class(cls)
			info.can_instantiate = ClassDB.can_instantiate(cls)
			var props := {}
			for p in ClassDB.class_get_property_list(cls, true):
				if p.usage & (PROPERTY_USAGE_GROUP | PROPERTY_USAGE_SUBGROUP | PROPERTY_USAGE_CATEGORY):
					continue
				props[p.name] = {"type": p.type, "hint": p.hint, "hint_string": p.hint_string, "usage": p.usage,
					"class_name": str(p.class_name)}
			info.properties = props
			var sigs := {}
			for s in ClassDB.class_get_signal_list(cls, true):
				var args := []
				for a in s.args:
					args.append({"name": a.name, "type": a.type, "class_name": str(a.class_name)})
				sigs[s.name] = args
			info.signals = sigs
			var methods := []
			var returns := {}
			for m in ClassDB.class_get_method_list(cls, true):
				methods.append(m.name)
				returns[m.name] = str(m.get("return", {}).get("class_name", ""))
			info.methods = methods
			info.returns = returns
			var enums := {}
			for e in ClassDB.class_get_enum_list(cls, true):
				var values := {}
				for c in ClassDB.class_get_enum_constants(cls, e, true):
					values[c] = ClassDB.class_get_integer_constant(cls, c)
				enums[e] = values
			info.enums = enums
			# Defaults as the editor sees them: a fresh instance's values.
			var obj = ClassDB.instantiate(cls)
			var defaults := {}
			for name in props:
				defaults[name] = var_to_str(obj.get(name))
			# Inherited from Node, but set by NetRoom's constructor.
			defaults["process_mode"] = var_to_str(obj.get("process_mode"))
			defaults["process_priority"] = var_to_str(obj.get("process_priority"))
			info.defaults = defaults
			obj.free()
		facts.classes[cls] = info
	print("NZ_FACTS=" + JSON.stringify(facts))
	quit(0)
