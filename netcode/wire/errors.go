package wire

import "errors"

var (
	// ErrTruncated indicates a frame shorter than its header says.
	ErrTruncated = errors.New("wire: truncated frame")
	// ErrTrailing indicates bytes after the end of a frame: an oversized frame.
	ErrTrailing = errors.New("wire: trailing bytes after frame")
	// ErrKind indicates a header byte that is not the kind the decoder reads.
	ErrKind = errors.New("wire: wrong frame kind")
	// ErrNotFinite indicates a NaN or infinite number, in a frame or a value to encode.
	ErrNotFinite = errors.New("wire: NaN or infinite value")
	// ErrRange indicates a value too large for its field (a half float holds ±65504).
	ErrRange = errors.New("wire: value out of range for its field")
	// ErrTooLarge indicates a control body over MaxControlBody.
	ErrTooLarge = errors.New("wire: control body too large")
	// ErrZeroRotation indicates a zero-length quaternion, which is no rotation at all.
	ErrZeroRotation = errors.New("wire: zero quaternion")
	// ErrSlot indicates a slot above MaxSlot.
	ErrSlot = errors.New("wire: slot out of range")
	// ErrEntity indicates an entity byte of 0, which has no byte.
	ErrEntity = errors.New("wire: entity byte 0")
)
