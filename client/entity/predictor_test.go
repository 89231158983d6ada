package entity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/netcode/geom"
)

func TestPredictorModes(t *testing.T) {
	h := newHarness(t)

	unbound := NewPredictor()
	unbound.Ready(nil)
	assert.Equal(t, ModeUnbound, unbound.Mode())
	searches := 0
	for range 2 * SearchEvery {
		if unbound.SearchDue() {
			searches++
		}
	}
	assert.Equal(t, 2, searches, "looks for a room once a second")
	unbound.BindLocal(h.room)
	assert.Equal(t, ModeLocal, unbound.Mode())
	assert.True(t, unbound.IsLocal())
	assert.False(t, unbound.SearchDue())

	remote := NewPredictor()
	remote.BindRemote(h.room, 3)
	remote.SetDim(Dim2D)
	remote.Ready(h.room)
	assert.Equal(t, ModeRemote, remote.Mode(), "a NetRoom's binding wins over the room found")
	assert.Equal(t, 3, remote.Slot())
	assert.Same(t, remote.remote, h.room.Bound(3))
	assert.True(t, remote.HideUntilData())
	remote.ExitTree()
	assert.Nil(t, h.room.Bound(3), "out of the tree: unbound")
	remote.EnterTree()
	assert.Same(t, remote.remote, h.room.Bound(3))

	fed := NewPredictor()
	require.NoError(t, fed.Push(0, geom.Vec3{X: 1}, geom.Identity, geom.Vec3{}, 0))
	assert.Equal(t, ModeFed, fed.Mode())
	pose, ch := fed.Frame(time.Millisecond)
	assert.True(t, pose.Valid)
	assert.NotZero(t, ch&ChangeHidden, "shown on its first state")
	assert.ErrorIs(t, unbound.Push(0, geom.Vec3{}, geom.Identity, geom.Vec3{}, 0), ErrLocalPush, "not on the local entity")
}

// TestPredictorSecondEntity: a second NetPredictor for one player is
// reported (netroom.EventError, and by the node), not silently swapped in.
func TestPredictorSecondEntity(t *testing.T) {
	h := newHarness(t)
	first, second := NewPredictor(), NewPredictor()
	for _, p := range []*Predictor{first, second} {
		p.BindRemote(h.room, 2)
		p.Ready(nil)
	}
	assert.Same(t, first.remote, h.room.Bound(2), "the first keeps the slot")
	errs := second.Errors()
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], netroom.ErrTaken)
	assert.Empty(t, first.Errors())

	a, b := NewPredictor(), NewPredictor()
	a.Ready(h.room)
	b.Ready(h.room)
	require.Len(t, b.Errors(), 1)
	a.ExitTree()
	b.ExitTree()
	b.EnterTree()
	assert.True(t, b.claimed, "the claim is free again")
	assert.Equal(t, []string{"error", "error"}, kinds(h.update()), "both reported as room errors")
}

// TestPredictorSettingsKeepHistory: a setting changed at run time keeps
// the samples (the entity stays drawn), and moving the cap away from the
// preset makes the profile Custom.
func TestPredictorSettingsKeepHistory(t *testing.T) {
	p := NewPredictor()
	assert.Equal(t, ProfileAuto, p.Profile(), "Auto is the default profile")
	assert.True(t, p.Config().Auto)
	for i := range 4 {
		at := time.Duration(i) * 16 * time.Millisecond
		require.NoError(t, p.Push(at, geom.Vec3{X: float64(i)}, geom.Identity, geom.Vec3{X: 60}, at))
	}
	pose, _ := p.Frame(60 * time.Millisecond)
	require.True(t, pose.Valid)
	rem := p.remote
	assert.True(t, rem.Config().Auto, "the running predictor tunes itself")

	p.SetProfile(ProfileCharacter)
	assert.Equal(t, CharacterPredictionCap, p.Config().PredictionCap)
	assert.False(t, p.Config().Auto, "a preset turns the tuning off")
	pose, _ = p.Frame(61 * time.Millisecond)
	assert.True(t, pose.Valid, "still drawn: the history is kept")
	assert.Same(t, rem, p.remote, "the same predictor")
	assert.Equal(t, CharacterPredictionCap, rem.Config().PredictionCap, "the new setting applies")

	cfg := p.Config()
	cfg.PredictionCap = 90 * time.Millisecond
	assert.True(t, p.SetConfig(cfg), "away from the preset")
	assert.Equal(t, ProfileCustom, p.Profile())
	cfg.CoastUntil = 2 * time.Second
	assert.False(t, p.SetConfig(cfg), "already custom")
	p.Frame(61500 * time.Microsecond)

	bad := p.Config()
	bad.GhostAfter, bad.HideAfter = time.Second, 500*time.Millisecond
	p.SetConfig(bad)
	pose, _ = p.Frame(62 * time.Millisecond)
	assert.True(t, pose.Valid)
	require.Len(t, p.Errors(), 1, "an invalid setting is reported once")
	p.Frame(63 * time.Millisecond)
	assert.Empty(t, p.Errors())
	assert.Equal(t, 2*time.Second, rem.Config().CoastUntil, "the last valid settings stay")

	p.SetSendRate(30)
	p.Frame(63500 * time.Microsecond)
	assert.Same(t, rem, p.remote, "the send rate is the local side's")
	p.SetDim(Dim2D)
	p.Frame(64 * time.Millisecond)
	assert.NotSame(t, rem, p.remote, "a new dimension needs a new predictor")
}

func TestPredictorEffects(t *testing.T) {
	p := NewPredictor()
	p.SetDim(Dim2D)
	p.SetGhostAlpha(2)
	assert.Equal(t, 1.0, p.GhostAlpha(), "clamped")
	p.SetGhostAlpha(0.25)
	require.NoError(t, p.Push(0, geom.Vec3{}, geom.Identity, geom.Vec3{}, 0))
	_, ch := p.Frame(time.Millisecond)
	e := p.EffectsOf(ch, false)
	assert.Equal(t, Effects{SetVisible: true, Visible: true, ResetInterpolation: true}, e, "shown, from where it is")

	cfg := p.Config()
	_, ch = p.Frame(cfg.GhostAfter + time.Millisecond)
	require.NotZero(t, ch&ChangeGhost)
	assert.Equal(t, Effects{SetAlpha: true, Alpha: 0.25}, p.EffectsOf(ch, true))
	_, ch = p.Frame(cfg.HideAfter + time.Millisecond)
	assert.Equal(t, Effects{SetVisible: true, Visible: false, SetAlpha: true, Alpha: 1}, p.EffectsOf(ch, true),
		"hidden, and no longer a ghost")

	p.SetApplyVisibility(false)
	assert.Equal(t, Effects{}, p.EffectsOf(ChangeHidden|ChangeGhost, true), "the game handles it")
	assert.True(t, p.EffectsOf(ChangeSnapped, true).ResetInterpolation)
}

// TestPredictorSends: a local entity sends through the room, with the
// extras set.
func TestPredictorSends(t *testing.T) {
	h := seated(t, 1, 1, player(1, "Ann"))
	p := NewPredictor()
	p.SetExtras(300, 7)
	p.SetDim(Dim3D)
	p.Ready(h.room)
	sent := 0
	for i := range 30 {
		if p.Sample(time.Duration(i)*time.Second/60, geom.Vec3{X: float64(i)}, geom.Identity, geom.Vec3{}, false) {
			sent++
		}
	}
	assert.Positive(t, sent)
	assert.Equal(t, uint64(sent), p.States())
	st := h.link.SentStates()[0]
	assert.Equal(t, uint8(1), st.Slot)
	assert.Equal(t, uint8(255), st.Anim, "clamped")
	assert.Equal(t, uint8(7), st.Input)
}

// treeNode is a node of a test scene tree.
type treeNode struct {
	parent   *treeNode
	children []*treeNode
	room     string
}

type testTree struct{}

func (testTree) Parent(n *treeNode) (*treeNode, bool) { return n.parent, n.parent != nil }
func (testTree) ChildCount(n *treeNode) int           { return len(n.children) }
func (testTree) Child(n *treeNode, i int) *treeNode   { return n.children[i] }
func (testTree) RoomOf(n *treeNode) (string, bool)    { return n.room, n.room != "" }
func add(parent *treeNode, room string) *treeNode {
	n := &treeNode{parent: parent, room: room}
	parent.children = append(parent.children, n)
	return n
}

func TestFindRoom(t *testing.T) {
	root := &treeNode{}
	main := add(root, "")
	add(main, "main room")
	level := add(main, "")
	player := add(level, "")
	pred := add(player, "")
	other := add(root, "")
	lonely := add(other, "")

	r, ok := FindRoom[*treeNode, string](testTree{}, pred, []string{"main room", "menu room"})
	assert.True(t, ok)
	assert.Equal(t, "main room", r, "a child of an ancestor")
	_, ok = FindRoom[*treeNode, string](testTree{}, lonely, []string{"main room", "menu room"})
	assert.False(t, ok, "none above and two in the tree: ambiguous")
	r, ok = FindRoom[*treeNode, string](testTree{}, lonely, []string{"menu room"})
	assert.True(t, ok)
	assert.Equal(t, "menu room", r, "the only one in the tree")
	inside := add(add(root, "ancestor room"), "")
	r, _ = FindRoom[*treeNode, string](testTree{}, inside, nil)
	assert.Equal(t, "ancestor room", r)
}

// TestFrameRoutesNothing: a NetPredictor's frame draws what the Room
// routed; routing is the NetRoom's, once per frame (Room.Route), not
// every drawn entity's again.
func TestFrameRoutesNothing(t *testing.T) {
	h := joined(t, 0, 0)
	p := NewPredictor()
	p.BindRemote(h.room, 1)
	p.Ready(h.room)
	h.link.PushStates(entityState(1, 0, 1, 1))

	p.Frame(20 * time.Millisecond)
	assert.Zero(t, h.room.Stats().Routed, "Frame routed")
	assert.Equal(t, 1, h.room.Route(), "the state waited for the Room's Route")
	p.Frame(21 * time.Millisecond)
	assert.Equal(t, uint64(1), p.remote.Added())
}
