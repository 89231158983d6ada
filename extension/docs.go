package main

import _ "embed"

// The class reference shown in the editor (F1, tooltips), in Godot's doc
// XML format. extension_test.go checks that every property, method,
// signal and constant is described.
var (
	//go:embed doc_classes/NetRoom.xml
	netRoomDocs string
	//go:embed doc_classes/NetPredictor.xml
	netPredictorDocs string
)

// iconPath is the editor icon of a class, inside the addon.
func iconPath(class string) string { return "res://addons/nearzero/icons/" + class + ".svg" }
