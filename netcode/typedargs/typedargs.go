package typedargs

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nearzero/nearzero/netcode/protocol"
)

var (
	// ErrBadArg indicates an argument of a type the protocol cannot carry
	// (Encode lists those), a float that is not finite, or arguments
	// nested more than MaxDepth deep.
	ErrBadArg = errors.New("typedargs: argument not carried")
)

// MaxDepth is how deeply arguments may nest (arrays in arrays): the
// protocol's limit (protocol.MaxArgDepth), which the server enforces on
// the JSON too. A typed value counts one level, as its JSON object does.
const MaxDepth = protocol.MaxArgDepth

// Encode encodes arguments as a JSON array (docs/protocol.md, "Typed
// arguments"). It takes nil, bool, int, int32, int64, float32 and float64
// (finite), string, StringName, []any (Array), Dict and map[string]any
// (Dictionary), the math types (Vector2... Transform3D) and the packed
// arrays ([]byte, []int32, []int64, []float32, []float64,
// PackedVector2Array, PackedVector3Array, []string), nested at most
// MaxDepth deep; anything else fails with ErrBadArg naming its place.
// Decode gives each back as the same type. No arguments encode as nil.
func Encode(args []any) (json.RawMessage, error) {
	if len(args) == 0 {
		return nil, nil
	}
	b := []byte{'['}
	for i, a := range args {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = encodeArg(b, a, 1); err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
	}
	return append(b, ']'), nil
}

// Decode decodes a JSON array of arguments to what Encode took: numbers
// written without a fraction or exponent that fit come back as int64, the
// rest as float64 (Encode writes every float with one, so types survive);
// arrays as []any; Dictionaries as Dict (in their order; int keys as
// int64), typed values as their types, []byte, []int32, []int64,
// []float32, []float64 and []string. A JSON object without "@" (older
// clients) is a Dict of String keys. Absent args are an empty list.
// Decode never panics, whatever raw holds.
func Decode(raw json.RawMessage) ([]any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	out, err := decodeArray(raw)
	if err != nil {
		return nil, fmt.Errorf("typedargs: %w", err)
	}
	return out, nil
}

func checkFloat(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%w: %v is not finite", ErrBadArg, f)
	}
	return nil
}

// Vector2 is Godot's Vector2 (x, y).
type Vector2 [2]float32

// Vector2i is Godot's Vector2i (x, y).
type Vector2i [2]int32

// Vector3 is Godot's Vector3 (x, y, z).
type Vector3 [3]float32

// Vector3i is Godot's Vector3i (x, y, z).
type Vector3i [3]int32

// Vector4 is Godot's Vector4 (x, y, z, w).
type Vector4 [4]float32

// Color is Godot's Color (r, g, b, a).
type Color [4]float32

// Quaternion is Godot's Quaternion (x, y, z, w).
type Quaternion [4]float32

// Rect2 is Godot's Rect2: position x, y then size x, y.
type Rect2 [4]float32

// Basis is Godot's Basis: its three rows, row after row.
type Basis [9]float32

// Transform2D is Godot's Transform2D: the x axis, the y axis, the origin.
type Transform2D [6]float32

// Transform3D is Godot's Transform3D: its basis (rows) then its origin.
type Transform3D [12]float32

// StringName is Godot's StringName (a String arrives as a Go string).
type StringName string

// PackedVector2Array is Godot's PackedVector2Array.
type PackedVector2Array []Vector2

// PackedVector3Array is Godot's PackedVector3Array.
type PackedVector3Array []Vector3

// Dict is a Godot Dictionary in its insertion order. Keys are int64,
// string or StringName; map[string]any is taken too when encoding.
type Dict []KeyValue

// KeyValue is one entry of a Dict.
type KeyValue struct {
	Key   any
	Value any
}

// Get returns the value under key (int keys as int64) and whether it is
// there.
func (d Dict) Get(key any) (any, bool) {
	for _, kv := range d {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// typeTag is the member naming a typed value's type.
const typeTag = "@"

// The type names on the wire (Godot's own).
const (
	tagDictionary  = "Dictionary"
	tagStringName  = "StringName"
	tagStringArray = "PackedStringArray"
)

// Dictionary key prefixes on the wire: the key's type, so int 1 and
// String "1" stay apart and no key can be "@".
const (
	keyString     = 's'
	keyInt        = 'i'
	keyStringName = 'n'
)

// encodeArg appends the JSON of one checked-as-it-goes argument.
func encodeArg(b []byte, a any, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: nested more than %d deep", ErrBadArg, MaxDepth)
	}
	switch v := a.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case float32:
		return appendFloat(b, float64(v), 32)
	case float64:
		return appendFloat(b, v, 64)
	case string:
		return appendString(b, v), nil
	case StringName:
		b = append(b, `{"@":"StringName","v":`...)
		return append(appendString(b, string(v)), '}'), nil
	case []string:
		if depth+1 > MaxDepth { // its strings sit one level inside
			return nil, fmt.Errorf("%w: nested more than %d deep", ErrBadArg, MaxDepth)
		}
		b = append(b, `{"@":"PackedStringArray","v":[`...)
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		return append(b, "]}"...), nil
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = encodeArg(b, e, depth+1); err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // a map has no order: sorted, so equal maps encode alike
		d := make(Dict, len(keys))
		for i, k := range keys {
			d[i] = KeyValue{k, v[k]}
		}
		return encodeArg(b, d, depth)
	case Dict:
		b = append(b, `{"@":"Dictionary"`...)
		for _, kv := range v {
			key, err := dictKey(kv.Key)
			if err != nil {
				return nil, err
			}
			b = append(appendString(append(b, ','), key), ':')
			if b, err = encodeArg(b, kv.Value, depth+1); err != nil {
				return nil, fmt.Errorf("[%v]: %w", kv.Key, err)
			}
		}
		return append(b, '}'), nil
	}
	name, raw, err := packNumbers(a)
	if err != nil {
		return nil, err
	}
	b = append(b, `{"@":`...)
	b = appendString(b, name)
	b = append(b, `,"v":"`...)
	b = base64.StdEncoding.AppendEncode(b, raw)
	return append(b, `"}`...), nil
}

// dictKey returns a Dictionary key as it is written on the wire.
func dictKey(k any) (string, error) {
	switch k := k.(type) {
	case string:
		return string(keyString) + k, nil
	case StringName:
		return string(keyStringName) + string(k), nil
	case int:
		return string(keyInt) + strconv.Itoa(k), nil
	case int32:
		return string(keyInt) + strconv.FormatInt(int64(k), 10), nil
	case int64:
		return string(keyInt) + strconv.FormatInt(k, 10), nil
	}
	return "", fmt.Errorf("%w: dictionary key of type %T (only int, String and StringName keys)", ErrBadArg, k)
}

// numberTypes are the typed values made of numbers: their wire name, how
// many bytes one element takes, and whether the numbers are floats (which
// must be finite).
var numberTypes = map[string]struct {
	size  int // bytes of one value (0: a packed array of elem-byte items)
	elem  int
	float bool
}{
	"Vector2": {8, 4, true}, "Vector2i": {8, 4, false}, "Vector3": {12, 4, true},
	"Vector3i": {12, 4, false}, "Vector4": {16, 4, true}, "Color": {16, 4, true},
	"Quaternion": {16, 4, true}, "Rect2": {16, 4, true}, "Basis": {36, 4, true},
	"Transform2D": {24, 4, true}, "Transform3D": {48, 4, true},
	"PackedByteArray": {0, 1, false}, "PackedInt32Array": {0, 4, false},
	"PackedInt64Array": {0, 8, false}, "PackedFloat32Array": {0, 4, true},
	"PackedFloat64Array": {0, 8, true}, "PackedVector2Array": {0, 8, true},
	"PackedVector3Array": {0, 12, true},
}

// packNumbers returns the wire name and little-endian bytes of a math type
// or packed array; ErrBadArg for any other type or a float not finite.
func packNumbers(a any) (string, []byte, error) {
	var name string
	var data any // a fixed-size value or slice binary.Append takes
	switch v := a.(type) {
	case Vector2:
		name, data = "Vector2", v
	case Vector2i:
		name, data = "Vector2i", v
	case Vector3:
		name, data = "Vector3", v
	case Vector3i:
		name, data = "Vector3i", v
	case Vector4:
		name, data = "Vector4", v
	case Color:
		name, data = "Color", v
	case Quaternion:
		name, data = "Quaternion", v
	case Rect2:
		name, data = "Rect2", v
	case Basis:
		name, data = "Basis", v
	case Transform2D:
		name, data = "Transform2D", v
	case Transform3D:
		name, data = "Transform3D", v
	case []byte:
		return "PackedByteArray", v, nil
	case []int32:
		name, data = "PackedInt32Array", v
	case []int64:
		name, data = "PackedInt64Array", v
	case []float32:
		name, data = "PackedFloat32Array", v
	case []float64:
		name, data = "PackedFloat64Array", v
	case PackedVector2Array:
		name, data = "PackedVector2Array", []Vector2(v)
	case PackedVector3Array:
		name, data = "PackedVector3Array", []Vector3(v)
	default:
		return "", nil, fmt.Errorf("%w: %T", ErrBadArg, a)
	}
	raw, err := binary.Append(nil, binary.LittleEndian, data)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %T: %v", ErrBadArg, a, err)
	}
	if numberTypes[name].float {
		if err := checkFloats(raw, numberTypes[name].elem); err != nil {
			return "", nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return name, raw, nil
}

// checkFloats fails with ErrBadArg when one of the little-endian floats
// in raw (float32 unless elem is 8) is NaN or infinite.
func checkFloats(raw []byte, elem int) error {
	for i := 0; i+4 <= len(raw); {
		var f float64
		if elem == 8 {
			f = math.Float64frombits(binary.LittleEndian.Uint64(raw[i:]))
			i += 8
		} else {
			f = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[i:])))
			i += 4
		}
		if err := checkFloat(f); err != nil {
			return err
		}
	}
	return nil
}

// unpackNumbers decodes the bytes of a typed value named name.
func unpackNumbers(name string, raw []byte) (any, error) {
	t := numberTypes[name]
	if t.size > 0 && len(raw) != t.size || t.size == 0 && len(raw)%t.elem != 0 {
		return nil, fmt.Errorf("%s of %d bytes", name, len(raw))
	}
	if t.float {
		if err := checkFloats(raw, t.elem); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	var out any
	n := len(raw) / t.elem
	switch name {
	case "Vector2":
		out = new(Vector2)
	case "Vector2i":
		out = new(Vector2i)
	case "Vector3":
		out = new(Vector3)
	case "Vector3i":
		out = new(Vector3i)
	case "Vector4":
		out = new(Vector4)
	case "Color":
		out = new(Color)
	case "Quaternion":
		out = new(Quaternion)
	case "Rect2":
		out = new(Rect2)
	case "Basis":
		out = new(Basis)
	case "Transform2D":
		out = new(Transform2D)
	case "Transform3D":
		out = new(Transform3D)
	case "PackedByteArray":
		return slices.Clone(raw), nil
	case "PackedInt32Array":
		s := make([]int32, n)
		out = &s
	case "PackedInt64Array":
		s := make([]int64, n)
		out = &s
	case "PackedFloat32Array":
		s := make([]float32, n)
		out = &s
	case "PackedFloat64Array":
		s := make([]float64, n)
		out = &s
	case "PackedVector2Array":
		s := make(PackedVector2Array, n)
		out = &s
	case "PackedVector3Array":
		s := make(PackedVector3Array, n)
		out = &s
	}
	if _, err := binary.Decode(raw, binary.LittleEndian, out); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// The value, not the pointer binary.Decode needed.
	switch p := out.(type) {
	case *Vector2:
		return *p, nil
	case *Vector2i:
		return *p, nil
	case *Vector3:
		return *p, nil
	case *Vector3i:
		return *p, nil
	case *Vector4:
		return *p, nil
	case *Color:
		return *p, nil
	case *Quaternion:
		return *p, nil
	case *Rect2:
		return *p, nil
	case *Basis:
		return *p, nil
	case *Transform2D:
		return *p, nil
	case *Transform3D:
		return *p, nil
	case *[]int32:
		return *p, nil
	case *[]int64:
		return *p, nil
	case *[]float32:
		return *p, nil
	case *[]float64:
		return *p, nil
	case *PackedVector2Array:
		return *p, nil
	case *PackedVector3Array:
		return *p, nil
	}
	return nil, fmt.Errorf("%s: not a typed value", name)
}

// appendFloat writes a finite float with a fraction or exponent ("1.0",
// not "1"), so it decodes as a float again: a GDScript float stays a float.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if err := checkFloat(f); err != nil {
		return nil, err
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'g', -1, bits)
	if !bytes.ContainsAny(b[start:], ".eE") {
		b = append(b, ".0"...)
	}
	return b, nil
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// errNotTyped marks a JSON object that is not a typed value (no "@"): a
// String-keyed Dictionary as older clients wrote them.
var errNotTyped = errors.New("not typed")

// decodeValue reads one JSON value from d, keeping the order of object
// members, and turns typed objects into their Go types.
func decodeValue(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			out := []any{}
			for d.More() {
				e, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				out = append(out, e)
			}
			_, err := d.Token() // ]
			return out, err
		case '{':
			var keys []string
			var vals []any
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				keys, vals = append(keys, k.(string)), append(vals, v)
			}
			if _, err := d.Token(); err != nil { // }
				return nil, err
			}
			return typedObject(keys, vals)
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		if i, err := t.Int64(); err == nil && !strings.ContainsAny(t.String(), ".eE") {
			return i, nil
		}
		f, err := t.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", t, err)
		}
		return f, nil
	}
	return tok, nil // nil, bool, string
}

// typedObject turns a decoded JSON object into its value: a typed value
// when it has "@", else a Dict of String keys (older clients' maps).
func typedObject(keys []string, vals []any) (any, error) {
	at := slices.Index(keys, typeTag)
	if at < 0 {
		d := make(Dict, len(keys))
		for i, k := range keys {
			d[i] = KeyValue{k, vals[i]}
		}
		return d, nil
	}
	name, _ := vals[at].(string)
	member := func(want string) (any, error) {
		if len(keys) != 2 || keys[1-at] != want {
			return nil, fmt.Errorf("%s: want members \"@\" and %q", name, want)
		}
		return vals[1-at], nil
	}
	switch name {
	case tagDictionary:
		d := make(Dict, 0, len(keys)-1)
		for i, k := range keys {
			if i == at {
				continue
			}
			key, err := parseKey(k)
			if err != nil {
				return nil, err
			}
			d = append(d, KeyValue{key, vals[i]})
		}
		return d, nil
	case tagStringName:
		v, err := member("v")
		s, ok := v.(string)
		if err != nil || !ok {
			return nil, fmt.Errorf("StringName: want \"v\" a string")
		}
		return StringName(s), nil
	case tagStringArray:
		v, err := member("v")
		a, ok := v.([]any)
		if err != nil || !ok {
			return nil, fmt.Errorf("PackedStringArray: want \"v\" an array of strings")
		}
		out := make([]string, len(a))
		for i, e := range a {
			if out[i], ok = e.(string); !ok {
				return nil, fmt.Errorf("PackedStringArray: want \"v\" an array of strings")
			}
		}
		return out, nil
	}
	if _, ok := numberTypes[name]; !ok {
		return nil, fmt.Errorf("unknown type %q", name)
	}
	v, err := member("v")
	s, ok := v.(string)
	if err != nil || !ok {
		return nil, fmt.Errorf("%s: want \"v\" a base64 string", name)
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return unpackNumbers(name, raw)
}

// parseKey reads a Dictionary key as the wire writes it.
func parseKey(k string) (any, error) {
	if k == "" {
		return nil, errors.New("dictionary key without its type")
	}
	switch rest := k[1:]; k[0] {
	case keyString:
		return rest, nil
	case keyStringName:
		return StringName(rest), nil
	case keyInt:
		i, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("dictionary key %q: %w", k, err)
		}
		return i, nil
	}
	return nil, fmt.Errorf("dictionary key %q of unknown type", k)
}

// decodeArray decodes raw, one JSON array, to its values.
func decodeArray(raw []byte) ([]any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	out, ok := v.([]any)
	if !ok {
		return nil, errors.New("not a JSON array")
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("text after the array")
	}
	return out, nil
}
