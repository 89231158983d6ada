// Package version holds the one release version of nearzero: the addon
// (NetRoom.version and its log line at load) and the room server
// (nearzero-server -version) both read it from here. The wire protocol and
// rules versions that decide who may play together are separate
// (netcode/wire.ProtocolVersion, netcode/wire.RulesVersion), and the
// release follows them: before 1.0, every change of either is a new minor
// release (0.4 -> 0.5), so two builds that cannot play together never
// share a minor version. Releases lists each release with the versions it
// speaks; CHANGELOG.md at the repository root has its notes.
package version

// Version is the release version, semantic versioning without a "v".
const Version = "0.5.0"

// Release is one release and the protocol and rules versions it speaks.
type Release struct {
	Version         string
	Protocol, Rules uint16
}

// Releases lists the releases, oldest first; the last is this build. A
// release whose protocol or rules differ from the one before has a new
// minor version (a new major from 1.0 on).
var Releases = []Release{
	// 0.2.0: every build until protocol 4 said 0.2.0 (protocols 1 to 4,
	// rules 1); this row is its last.
	{Version: "0.2.0", Protocol: 4, Rules: 1},
	// 0.5.0: room size, shared-object resets; the minor is the protocol's
	// version (0.3 and 0.4 were never released).
	{Version: "0.5.0", Protocol: 5, Rules: 2},
}
