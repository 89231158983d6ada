// Package testkit is what the tests of the client packages share: a real
// room server on loopback (StartServer, with its metrics), the settings
// that make a client sync fast and keep direct links on this machine
// (QuickSync, LoopbackICE, LoopbackDirect), a scriptable server link
// (FakeLink, a netroom.ServerLink) and a clock the test steps (Clock).
//
// For tests only: it imports the server, which nothing under client/ may
// outside its tests, so it lives here, outside client/, and no package's
// non-test code imports it (test/boundaries enforces both). It imports
// neither client/netroom nor client/entity, so that their in-package
// tests can use it.
package testkit
