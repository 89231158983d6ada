package netroom

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/nearzero/nearzero/client/serverlink"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/version"
	"github.com/nearzero/nearzero/netcode/wire"
)

// ConnError says why a connection failed or dropped, in a form a game can
// match on (NetRoom.ConnectionError); EventConnectionError carries it.
type ConnError uint8

// Connection errors. Never renumber one: games match on the numbers.
const (
	// ConnNone: no error.
	ConnNone ConnError = iota
	// ConnBadAddress: no server address, or one that is not a ws, wss,
	// http or https URL or host:port.
	ConnBadAddress
	// ConnRefused: nothing listens at the address: the server is not
	// running, or it stopped or crashed (a game hosting with host_local
	// that quit or crashed reads so to the others).
	ConnRefused
	// ConnUnreachable: the host name does not resolve, or no route leads
	// to it.
	ConnUnreachable
	// ConnTimeout: the server did not answer in time (a connect that timed
	// out, or a connection that went silent).
	ConnTimeout
	// ConnLost: the connection dropped without a word from the server (a
	// reset, the server's process gone).
	ConnLost
	// ConnServerClosed: the server closed the connection: it is shutting
	// down or being updated (draining, going away).
	ConnServerClosed
	// ConnRejected: the server ended the connection for something this
	// client did (too slow, rate limited, implausible states, a bad
	// token, kicked, the same user connected elsewhere).
	ConnRejected
	// ConnUpdateRequired: the server speaks another protocol or rules
	// version: update the game or the server.
	ConnUpdateRequired
	// ConnGaveUp: reconnecting after a drop did not succeed within the
	// seat's hold time; the message names the last attempt's failure.
	ConnGaveUp
)

var connErrorNames = [...]string{"none", "bad_address", "refused", "unreachable", "timeout", "lost",
	"server_closed", "rejected", "update_required", "gave_up"}

// ConnErrors lists every ConnError in order, for the NetRoom enum.
var ConnErrors = []ConnError{ConnNone, ConnBadAddress, ConnRefused, ConnUnreachable, ConnTimeout, ConnLost,
	ConnServerClosed, ConnRejected, ConnUpdateRequired, ConnGaveUp}

// String returns the snake_case name ("refused"), or "unknown".
func (c ConnError) String() string {
	if int(c) < len(connErrorNames) {
		return connErrorNames[c]
	}
	return "unknown"
}

// errGaveUp marks the error of a reconnect that gave up. serverlink says
// so in its text only ("reconnect: gave up after..."), so gaveUp reads it
// there.
var errGaveUp = errors.New("gave up reconnecting")

// ConnErrorOf classifies err, the failure of a connect or a connection.
func ConnErrorOf(err error) ConnError {
	if err == nil {
		return ConnNone
	}
	if errors.Is(err, errGaveUp) {
		return ConnGaveUp
	}
	if errors.Is(err, wire.ErrUpdateRequired) {
		return ConnUpdateRequired
	}
	switch code := protocol.CodeOf(err); code {
	case protocol.CodeUpdateRequired:
		return ConnUpdateRequired
	case protocol.CodeGoingAway, protocol.CodeDraining, protocol.CodeNormal:
		return ConnServerClosed
	case protocol.CodeTimeout:
		return ConnTimeout
	case -1:
	default:
		if code >= 4000 {
			return ConnRejected
		}
	}
	var dns *net.DNSError
	switch {
	case errors.Is(err, ErrNoServer), errors.Is(err, ErrConfig), errors.Is(err, errBadAddress):
		return ConnBadAddress
	case errors.Is(err, syscall.ECONNREFUSED):
		return ConnRefused
	case errors.As(err, &dns), errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return ConnUnreachable
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), isTimeout(err),
		errors.Is(err, serverlink.ErrServerSilent):
		return ConnTimeout
	}
	return ConnLost
}

// isTimeout reports a net.Error that timed out.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// errBadAddress marks a server address ServerURL refused.
var errBadAddress = errors.New("bad server address")

// gaveUpError is a reconnect's final error, marked so that ConnErrorOf
// tells it from a first failure.
type gaveUpError struct{ err error }

func (e gaveUpError) Error() string        { return e.err.Error() }
func (e gaveUpError) Unwrap() error        { return e.err }
func (e gaveUpError) Is(target error) bool { return target == errGaveUp }

// gaveUp marks err when serverlink said it gave up reconnecting.
func gaveUp(err error) error {
	if err != nil && strings.Contains(err.Error(), "gave up after") {
		return gaveUpError{err}
	}
	return err
}

// connText is the message of a connection error for players and logs:
// what happened in words, then the cause without this library's package
// prefixes.
func connText(c ConnError, server string, err error) string {
	var what string
	switch c {
	case ConnBadAddress:
		what = "the server address is not usable"
	case ConnRefused:
		what = "nothing answers at " + server + ": the server is not running, or it stopped"
	case ConnUnreachable:
		what = server + " cannot be reached"
	case ConnTimeout:
		what = "the server at " + server + " did not answer in time"
	case ConnLost:
		what = "the connection to " + server + " was lost"
	case ConnServerClosed:
		what = "the server closed the connection"
	case ConnRejected:
		what = "the server ended the connection"
	case ConnUpdateRequired:
		return updateText(err)
	case ConnGaveUp:
		what = "gave up reconnecting to " + server
		if errors.Is(err, syscall.ECONNREFUSED) {
			what += ": the server is not running any more"
		}
	default:
		what = "connection error"
	}
	if err == nil {
		return what
	}
	return what + " (" + UserText(err) + ")"
}

// updateText is the message of "update required": both versions, so a
// player can tell which side is older.
func updateText(err error) string {
	return fmt.Sprintf("update required: this game is nearzero %s (protocol %d, rules %d), and the server another version (%s)",
		version.Version, wire.ProtocolVersion, wire.RulesVersion, UserText(err))
}

// internalPrefixes are the package names Go errors start their text with;
// a player reads the message without them.
var internalPrefixes = []string{"netroom: ", "serverlink: ", "client: ", "protocol: ", "typedargs: ",
	"entity: ", "direct: ", "core: ", "wire: ", "reconnect: "}

// UserText returns err's text for a player or a game's log: without this
// library's package prefixes ("join: protocol: not a room code" reads
// "join: not a room code"), and for a protocol Error its message alone.
func UserText(err error) string {
	if err == nil {
		return ""
	}
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Message != "" {
		return pe.Message
	}
	s := err.Error()
	for _, p := range internalPrefixes {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// connFailed queues EventConnectionError for err (the failure of a
// connect attempt, or of the open connection).
func (r *Room) connFailed(err error) {
	c := ConnErrorOf(err)
	r.emit(Event{Kind: EventConnectionError, Conn: c, Text: connText(c, r.serverName(), err)})
}

// serverName is the server address as the player typed it, for messages.
func (r *Room) serverName() string {
	if s := strings.TrimSpace(r.cfg.Server); s != "" {
		return s
	}
	return "the server"
}
