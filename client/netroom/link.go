package netroom

import (
	"context"
	"time"

	"github.com/nearzero/nearzero/client"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/netcode/wire"
)

// Link is the part of *client.Client a Room uses. It exists so that tests
// can drive a Room without a server; DialClient returns the real one.
type Link interface {
	Create(ctx context.Context, settings *protocol.Settings) (*protocol.Joined, error)
	Join(ctx context.Context, codeOrLink string) (*protocol.Joined, error)
	Leave(ctx context.Context) error
	Send(m protocol.Message) error
	SendState(s *wire.State) error
	PollEvents(dst []client.Event) []client.Event
	PollStates(dst []client.RemoteState) []client.RemoteState
	Synced() bool
	ServerTime(local time.Duration) time.Duration
	LocalTime(server time.Duration) time.Duration
	RTT() time.Duration
	Token() string
	Close(ctx context.Context) error
}

// Dialer connects to the server at url (already normalised by ServerURL).
// It may block; a Room calls it from a goroutine.
type Dialer func(ctx context.Context, url string, opts *client.Options) (Link, error)

// DialClient is the default Dialer: client.Dial.
func DialClient(ctx context.Context, url string, opts *client.Options) (Link, error) {
	c, err := client.Dial(ctx, url, opts)
	if err != nil {
		return nil, err // client.Dial names the URL already
	}
	return c, nil
}

var _ Link = (*client.Client)(nil)
