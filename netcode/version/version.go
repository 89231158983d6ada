// Package version holds the one release version of nearzero: the addon
// (NetRoom.version and its log line at load) and the room server
// (nearzero-server -version) both read it from here. The wire protocol and
// rules versions that decide who may play together are separate
// (netcode/wire.ProtocolVersion, netcode/wire.RulesVersion).
package version

// Version is the release version, semantic versioning without a "v".
const Version = "0.2.0"
