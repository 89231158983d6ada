package predict

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/wire"
)

func TestStrings(t *testing.T) {
	for want, s := range map[string]interface{ String() string }{
		"server": PathServer, "direct": PathDirect, "invalid": Path(9),
	} {
		assert.Equal(t, want, s.String())
	}
	for v, want := range map[Visibility]string{Visible: "visible", Ghost: "ghost", Hidden: "hidden", 9: "invalid"} {
		assert.Equal(t, want, v.String())
	}
}

func TestSampleOf(t *testing.T) {
	in := wire.State{
		Fields: wire.HasAcc | wire.HasTurn | wire.HasExtras,
		Flags:  wire.FlagTeleport,
		Seq:    65535,
		Stamp:  wire.StampOf(ms(1234)),
		Pos:    geom.Vec3{X: 1.5, Y: 2, Z: -3},
		Vel:    geom.Vec3{X: 10, Z: 0.5},
		Acc:    geom.Vec3{Y: -9.8125},
		Rot:    geom.AxisAngle(geom.Up3D, 0.5),
		Turn:   0.75,
		Anim:   3,
		Input:  0x81,
	}
	b, err := wire.AppendState(nil, &in)
	require.NoError(t, err)
	var dec wire.State
	require.NoError(t, wire.DecodeState(b, &dec))
	s := SampleOf(&dec, ms(987))
	assert.Equal(t, Sample{
		Time: ms(987), Seq: 65535, Pos: dec.Pos, Vel: dec.Vel, Acc: dec.Acc, Rot: dec.Rot,
		Turn: 0.75, Anim: 3, Input: 0x81, Flags: wire.FlagTeleport,
	}, s)
	assertQuatNear(t, in.Rot, s.Rot, 2e-3, "rotation survives the wire")
}
