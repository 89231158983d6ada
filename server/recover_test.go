package server

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicOnJoin is a log handler that panics inside room logic (the room
// logs "joined" under its lock) while armed: a stand-in for a bug there.
type panicOnJoin struct{ armed atomic.Bool }

func (h *panicOnJoin) Enabled(context.Context, slog.Level) bool { return true }
func (h *panicOnJoin) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "joined" && h.armed.Load() {
		panic("bug in room logic")
	}
	return nil
}
func (h *panicOnJoin) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *panicOnJoin) WithGroup(string) slog.Handler      { return h }

// TestPanicInRoomClosesThatRoomOnly: a panic in one room's logic must not
// take the process down (embedded in a game, the process is the game) nor
// leave that room's lock held: the room is closed, the rest goes on.
func TestPanicInRoomClosesThatRoomOnly(t *testing.T) {
	h := &panicOnJoin{}
	e := newEnvOpts(t, nil, envOpts{log: slog.New(h)})
	ann := e.dial("Ann", nil)
	first, err := ann.Create(ctxT(t), nil)
	require.NoError(t, err)

	h.armed.Store(true)
	bob := e.dial("Bob", nil)
	_, err = bob.Create(ctxT(t), nil)
	require.Error(t, err, "the room whose logic panicked is gone")
	h.armed.Store(false)
	assert.Equal(t, 1.0, e.s.m.Panics.Value())

	cid := e.dial("Cid", nil)
	_, err = cid.Join(ctxT(t), first.Code)
	require.NoError(t, err, "the other room still takes players")
	again, err := e.dial("Dee", nil).Create(ctxT(t), nil)
	require.NoError(t, err, "and new rooms open")
	assert.NotEqual(t, first.Code, again.Code)
}

// TestPanicInBackgroundLoopRestartsIt: a background loop that panics is
// restarted, not lost (a dead results writer would lose every result).
func TestPanicInBackgroundLoopRestartsIt(t *testing.T) {
	e := newEnv(t, nil)
	var runs atomic.Int32
	e.s.bg.Add(1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.s.supervise("test loop", func() {
			if runs.Add(1) == 1 {
				panic("bug in a loop")
			}
		})
	}()
	<-done
	assert.Equal(t, int32(2), runs.Load(), "run again after the panic, then returned normally")
	assert.Equal(t, 1.0, e.s.m.Panics.Value())
}
