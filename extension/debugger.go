package main

import (
	"strings"

	"github.com/nearzero/nearzero/bindings/godot"
	"github.com/nearzero/nearzero/client/netdebug"
)

// The game's side of the editor's nearzero debugger tab
// (addons/nearzero/debugger/): while the game runs from the editor with
// the addon's editor plugin enabled, each NetRoom sends a sample of its
// room (client/netdebug) ten times a second as the debugger message
// "nearzero:sample". Otherwise nothing is sampled or sent: the check is
// one cached boolean per frame.

// debugMessage is the message the editor plugin captures ("nearzero"
// prefix).
const debugMessage = "nearzero:sample"

// pluginConfig is the addon's editor plugin, as project.godot lists it in
// editor_plugins/enabled when enabled.
const pluginConfig = "addons/nearzero/plugin.cfg"

// debugState is whether samples go to the editor: decided once per run
// (a debugger attaches at start-up, and the project's enabled plugins are
// read from project.godot).
var debugState struct {
	checked, on bool
}

// debuggerOn reports whether the editor's nearzero tab is listening: a
// debugger is attached (EngineDebugger.is_active) and the project enables
// the addon's editor plugin. Without the plugin the editor would warn of
// every message as unknown.
func debuggerOn() bool {
	if !debugState.checked {
		debugState.checked = true
		debugState.on = godot.DebuggerActive() && pluginEnabled()
	}
	return debugState.on
}

// pluginEnabled reports whether project.godot enables the addon's editor
// plugin.
func pluginEnabled() bool {
	v := godot.ProjectSetting("editor_plugins/enabled")
	defer v.Destroy()
	list, _ := godot.VariantAs[[]string](v)
	for _, p := range list {
		if strings.HasSuffix(p, pluginConfig) {
			return true
		}
	}
	return false
}

// debugFeed is a NetRoom's sampler and its reused sample.
type debugFeed struct {
	feed   netdebug.Feed
	sample netdebug.Sample
}

// debugTick sends a sample to the editor when one is due (netdebug's
// 10 Hz), on the main thread from _process.
func (n *NetRoom) debugTick() {
	if !debuggerOn() {
		return
	}
	now := procClock.Now()
	if !n.dbg.feed.Due(now) {
		return
	}
	n.dbg.feed.Sample(n.model, now, &n.dbg.sample)
	d := sampleDict(&n.dbg.sample, n.debugSource())
	data := godot.NewArray()
	godot.ArrayAppend(data, d)
	d.Destroy()
	godot.DebuggerSend(debugMessage, data)
	data.Destroy()
}

// debugSource names the NetRoom in the tab, for games with more than one:
// its parent's name and its own ("Host/NetRoom").
func (n *NetRoom) debugSource() string {
	if p := n.Parent(); !p.IsNull() {
		return p.Name() + "/" + n.Name()
	}
	return n.Name()
}

// sampleDict converts a sample into the Dictionary the editor plugin
// reads (addons/nearzero/debugger/nearzero_debugger.gd): times in seconds
// and milliseconds, unknown figures negative.
func sampleDict(s *netdebug.Sample, source string) godot.Dictionary {
	d := godot.NewDictionary()
	godot.DictionarySet(d, "source", source)
	godot.DictionarySet(d, "time", s.Time.Seconds())

	room := godot.NewDictionary()
	godot.DictionarySet(room, "status", s.Room.Status)
	godot.DictionarySet(room, "code", s.Room.Code)
	godot.DictionarySet(room, "slot", int64(s.Room.Slot))
	godot.DictionarySet(room, "host", int64(s.Room.Host))
	godot.DictionarySet(room, "phase", s.Room.Phase)
	godot.DictionarySet(room, "synced", s.Room.Synced)
	players := godot.NewArray()
	for _, p := range s.Room.Players {
		pd := godot.NewDictionary()
		godot.DictionarySet(pd, "slot", int64(p.Slot))
		godot.DictionarySet(pd, "name", p.Name)
		godot.DictionarySet(pd, "connected", p.Connected)
		godot.ArrayAppend(players, pd)
		pd.Destroy()
	}
	godot.DictionarySet(room, "players", players)
	players.Destroy()
	godot.DictionarySet(d, "room", room)
	room.Destroy()

	links := godot.NewArray()
	for _, l := range s.Links {
		ld := godot.NewDictionary()
		godot.DictionarySet(ld, "name", l.Name)
		godot.DictionarySet(ld, "slot", int64(l.Slot))
		godot.DictionarySet(ld, "up", l.Up)
		godot.DictionarySet(ld, "rtt_ms", ms(l.RTT))
		godot.DictionarySet(ld, "offset_ms", ms(l.Offset))
		godot.DictionarySet(ld, "loss", l.Loss)
		godot.DictionarySet(ld, "jitter_ms", ms(l.Jitter))
		godot.DictionarySet(ld, "in_bps", l.InPerSec)
		godot.DictionarySet(ld, "out_bps", l.OutPerSec)
		godot.DictionarySet(ld, "candidates", l.Candidates)
		godot.ArrayAppend(links, ld)
		ld.Destroy()
	}
	godot.DictionarySet(d, "links", links)
	links.Destroy()

	ents := godot.NewArray()
	for _, e := range s.Entities {
		ed := godot.NewDictionary()
		godot.DictionarySet(ed, "slot", int64(e.Slot))
		godot.DictionarySet(ed, "entity", int64(e.Entity))
		godot.DictionarySet(ed, "age_ms", ms(e.Age))
		godot.DictionarySet(ed, "correction", e.Correction)
		godot.DictionarySet(ed, "speed", e.Speed)
		godot.DictionarySet(ed, "path", e.Path)
		godot.DictionarySet(ed, "visibility", e.Visibility)
		godot.DictionarySet(ed, "pops", int64(e.Pops))
		godot.DictionarySet(ed, "snaps", int64(e.Snaps))
		godot.ArrayAppend(ents, ed)
		ed.Destroy()
	}
	godot.DictionarySet(d, "entities", ents)
	ents.Destroy()
	return d
}
