package godot

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClassEnums: an enum's values are class constants, and properties,
// arguments, returns and signal arguments typed with it carry its
// qualified name and CLASS_IS_ENUM, as the engine's own enums do.
func TestClassEnums(t *testing.T) {
	c := NewClass[plainNode]("EnumProbe")
	mode := c.Enum("Mode").Value("MODE_SLOW", 0).Value("MODE_FAST", 1)
	assert.Equal(t, "EnumProbe.Mode", mode.Name())
	p := Property(c, "mode", func(*plainNode) int64 { return 0 }, func(*plainNode, int64) {}).OfEnum(mode, "MODE_")
	Property(c, "on", func(*plainNode) bool { return true }, nil).Getter("is_on")
	m := Method1R(c, "next", func(_ *plainNode, v int64) int64 { return v }, "mode").ArgEnum(0, mode).ReturnEnum(mode)
	Method0R(c, "me", func(n *plainNode) Node { return n.Node }).ReturnClass("EnumProbe")
	s := NewSignal1[int64](c, "mode_changed", "mode").ArgEnum(mode)
	require.NoError(t, c.Err())

	info := p.decl.info
	assert.Equal(t, "EnumProbe.Mode", info.class)
	assert.Equal(t, HintEnum, info.hint)
	assert.Equal(t, "Slow:0,Fast:1", info.hintString)
	assert.NotZero(t, info.usage&UsageClassIsEnum)
	assert.Equal(t, UsageDefault, info.usage&UsageDefault, "still saved and shown")
	assert.Equal(t, "EnumProbe.Mode", p.decl.getterDecl.ret.class, "the getter returns the enum")
	assert.Equal(t, "EnumProbe.Mode", p.decl.setterDecl.args[0].class, "the setter takes it")
	assert.Equal(t, "EnumProbe.Mode", m.decl.args[0].class)
	assert.Equal(t, "EnumProbe.Mode", m.decl.ret.class)
	assert.Equal(t, UsageDefault|UsageClassIsEnum, s.decl.args[0].usage)

	d := c.Describe()
	for _, want := range []string{
		"property mode: EnumProbe.Mode",
		"property on: bool usage 268435460 get is_on\n",
		"method next(mode: EnumProbe.Mode) -> EnumProbe.Mode",
		"method me() -> EnumProbe",
		"signal mode_changed(mode: EnumProbe.Mode)",
		"const MODE_FAST = 1 (enum Mode)",
	} {
		assert.Contains(t, d, want)
	}
	assert.NotContains(t, d, "get_on", "the getter was renamed")

	bad := NewClass[plainNode]("EnumBad")
	e := bad.Enum("E").Value("A", 0)
	Property(bad, "label", func(*plainNode) string { return "" }, nil).OfEnum(e, "")
	assert.ErrorContains(t, bad.Err(), "only an integer")
}

type defaultsProbe struct{ Node }

// TestMethodDefaults: default arguments show in the declaration (and the
// class reference's params) and are checked when the class registers.
func TestMethodDefaults(t *testing.T) {
	c := NewClass[defaultsProbe]("DefaultsProbe")
	m := Method2(c, "open", func(*defaultsProbe, int64, string) {}, "size", "name").Defaults(int64(0), "lobby")
	assert.Contains(t, c.Describe(), `method open(size: int = 0, name: String = lobby)`)
	for _, d := range m.decl.defaults {
		v, ok := defaultVariant(d)
		assert.True(t, ok, "%T", d)
		v.Destroy()
	}
	_, ok := defaultVariant([]int{1})
	assert.False(t, ok, "only scalars")
}
