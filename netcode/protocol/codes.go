package protocol

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Code is an error code. The same number names the error in an Error message
// and, when the connection must end, in the WebSocket close frame.
//
// 1000 and 1001 are RFC 6455's normal closure and going away; 1009 is the
// WebSocket library's "message too big". RFC 6455 leaves 4000-4999 to
// applications: every nearzero error lives there.
type Code int

// Codes. Never renumber one: clients of older builds read them.
const (
	// CodeNormal is a normal close (RFC 6455 1000): the client left.
	CodeNormal Code = 1000
	// CodeGoingAway is the close a draining server sends once rounds are done
	// (RFC 6455 1001): reconnect to another server or later.
	CodeGoingAway Code = 1001
	// CodeTooBig is the close sent for a message over the read limit (1009).
	CodeTooBig Code = 1009

	// CodeBadRequest: a control body that is not valid JSON for its type, or
	// a field out of range.
	CodeBadRequest Code = 4000
	// CodeUpdateRequired: another protocol or rules version; the connection ends.
	CodeUpdateRequired Code = 4001
	// CodeBadToken: the identity token was not issued by this server; the
	// connection ends and the client should retry without a token.
	CodeBadToken Code = 4002
	// CodeSessionReplaced: the same user connected again; this older
	// connection ends and must not reconnect on its own.
	CodeSessionReplaced Code = 4003
	// CodeRoomFull: the room has no free seat.
	CodeRoomFull Code = 4004
	// CodeRoomNotFound: no room has that code (or it closed).
	CodeRoomNotFound Code = 4005
	// CodeServerFull: the server runs its maximum number of rooms.
	CodeServerFull Code = 4006
	// CodeDraining: the server is shutting down and refuses new rooms and rounds.
	CodeDraining Code = 4007
	// CodeRateLimited: too many messages; repeated, it ends the connection.
	CodeRateLimited Code = 4008
	// CodeTooSlow: the client reads too slowly and its reliable queue
	// overflowed, or a write stalled; the connection ends.
	CodeTooSlow Code = 4009
	// CodeBadFrame: a frame that does not decode (truncated, wrong kind,
	// NaN); repeated, it ends the connection.
	CodeBadFrame Code = 4010
	// CodeUnknownType: a control type this server does not know.
	CodeUnknownType Code = 4011
	// CodeImplausible: states moving faster than the game allows or
	// teleporting; repeated, it ends the connection.
	CodeImplausible Code = 4012
	// CodeNotHost: only the host may do that.
	CodeNotHost Code = 4013
	// CodeWrongPhase: not allowed in the room's current phase.
	CodeWrongPhase Code = 4014
	// CodeNotReady: the host tried to start before everyone was loaded and ready.
	CodeNotReady Code = 4015
	// CodeNotInRoom: the message needs a room and the client is in none.
	CodeNotInRoom Code = 4016
	// CodeBadName: a display name outside the length or character rules.
	CodeBadName Code = 4017
	// CodeTimeout: the client did not say hello in time; the connection ends.
	CodeTimeout Code = 4018
	// CodeAlreadyInRoom: create or join while already seated; leave first.
	CodeAlreadyInRoom Code = 4019
	// CodeInternal: a server fault; the message says no more.
	CodeInternal Code = 4020
	// CodeKicked: the host removed the player from the room, which it may
	// not rejoin for a while; the connection ends and must not reconnect
	// on its own.
	CodeKicked Code = 4021
	// CodeRedirect: the request belongs on another node of a cluster; the
	// Error's URL names it. A client connects there (same token: every
	// node accepts it) and sends the request again, a create with
	// Placed set. Never a close code.
	CodeRedirect Code = 4022
	// CodeTooMany: a player asked for more entities than the room allows
	// (Spawn). Never a close code.
	CodeTooMany Code = 4023
)

var codeNames = map[Code]string{
	CodeNormal:          "normal",
	CodeGoingAway:       "going_away",
	CodeTooBig:          "too_big",
	CodeBadRequest:      "bad_request",
	CodeUpdateRequired:  "update_required",
	CodeBadToken:        "bad_token",
	CodeSessionReplaced: "session_replaced",
	CodeRoomFull:        "room_full",
	CodeRoomNotFound:    "room_not_found",
	CodeServerFull:      "server_full",
	CodeDraining:        "draining",
	CodeRateLimited:     "rate_limited",
	CodeTooSlow:         "too_slow",
	CodeBadFrame:        "bad_frame",
	CodeUnknownType:     "unknown_type",
	CodeImplausible:     "implausible",
	CodeNotHost:         "not_host",
	CodeWrongPhase:      "wrong_phase",
	CodeNotReady:        "not_ready",
	CodeNotInRoom:       "not_in_room",
	CodeBadName:         "bad_name",
	CodeTimeout:         "timeout",
	CodeAlreadyInRoom:   "already_in_room",
	CodeInternal:        "internal",
	CodeKicked:          "kicked",
	CodeRedirect:        "redirect",
	CodeTooMany:         "too_many",
}

// String returns the code's snake_case name, or its number for an unknown code.
func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return "code_" + strconv.Itoa(int(c))
}

// Codes returns every defined code in increasing order (for docs and tests).
func Codes() []Code {
	out := make([]Code, 0, len(codeNames))
	for c := range codeNames {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// Fatal reports whether a client must not reconnect on its own after a close
// with this code: the same attempt would fail again, or the user moved on.
func (c Code) Fatal() bool {
	switch c {
	case CodeUpdateRequired, CodeSessionReplaced, CodeImplausible,
		CodeRateLimited, CodeBadFrame, CodeNormal, CodeKicked:
		return true
	}
	return false
}

// CloseError is a connection that ended with a close frame.
type CloseError struct {
	Code   Code
	Reason string
}

// Error implements error.
func (e *CloseError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("connection closed: %s (%d)", e.Code, int(e.Code))
	}
	return fmt.Sprintf("connection closed: %s (%d): %s", e.Code, int(e.Code), e.Reason)
}

// CloseCodeOf returns the close code of err when err is or wraps a
// *CloseError, and -1 otherwise.
func CloseCodeOf(err error) Code {
	var ce *CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return -1
}

// CodeOf returns the code of err when err is or wraps a *CloseError or an
// *Error, and -1 otherwise.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CloseCodeOf(err)
}
