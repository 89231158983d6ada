package netbench

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// InputEvent is one recorded input change of one client's bot: Input holds
// from At (true time since the start of the run) until the next event of
// the same client.
type InputEvent struct {
	At     time.Duration
	Client string // "a" or "b"
	Input  Input
}

// Recording is a set of recorded inputs, replayed by Options.Inputs in
// place of the scripted drivers (round and contact logic still apply).
type Recording struct {
	Events []InputEvent
}

// forClient returns the events of one client in time order.
func (r *Recording) forClient(name string) []InputEvent {
	var out []InputEvent
	for _, e := range r.Events {
		if e.Client == name {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b InputEvent) int { return int(a.At - b.At) })
	return out
}

// inputHeader is the CSV header of a recording.
var inputHeader = []string{"t_s", "client", "throttle", "brake", "steer", "heading_rad", "jump"}

// WriteRecording writes r as CSV: a header, then one line per event with
// the columns t_s, client, throttle, brake, steer, heading_rad, jump (0/1).
func WriteRecording(w io.Writer, r *Recording) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(inputHeader); err != nil {
		return fmt.Errorf("write recording: %w", err)
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, e := range r.Events {
		jump := "0"
		if e.Input.Jump {
			jump = "1"
		}
		rec := []string{f(e.At.Seconds()), e.Client, f(e.Input.Throttle), f(e.Input.Brake),
			f(e.Input.Steer), f(e.Input.Heading), jump}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("write recording: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write recording: %w", err)
	}
	return nil
}

// ErrRecording indicates a recording file that cannot be read.
var ErrRecording = errors.New("netbench: bad recording")

// ReadRecording reads the CSV that WriteRecording writes. A header line is
// optional; blank lines are not allowed.
func ReadRecording(rd io.Reader) (*Recording, error) {
	cr := csv.NewReader(rd)
	cr.FieldsPerRecord = len(inputHeader)
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read recording: %w: %w", ErrRecording, err)
	}
	first := 1 // the file's line number of rows[0]
	if len(rows) > 0 && rows[0][0] == inputHeader[0] {
		rows, first = rows[1:], 2
	}
	rec := &Recording{}
	for i, row := range rows {
		line := first + i
		var nums [5]float64
		for j := range nums {
			col := []int{0, 2, 3, 4, 5}[j]
			v, err := strconv.ParseFloat(row[col], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("read recording: %w: line %d, column %s: %q is not a finite number",
					ErrRecording, line, inputHeader[col], row[col])
			}
			nums[j] = v
		}
		if row[1] != "a" && row[1] != "b" {
			return nil, fmt.Errorf("read recording: %w: line %d: client %q is not a or b", ErrRecording, line, row[1])
		}
		if nums[0] < 0 || nums[0] > 1e6 {
			return nil, fmt.Errorf("read recording: %w: line %d: time %v s out of range", ErrRecording, line, nums[0])
		}
		rec.Events = append(rec.Events, InputEvent{
			// Whole microseconds: recorded times are on the bots' 2 ms grid,
			// and a float seconds value must not land a nanosecond early.
			At:     time.Duration(math.Round(nums[0]*1e6)) * time.Microsecond,
			Client: row[1],
			Input: Input{Throttle: nums[1], Brake: nums[2], Steer: nums[3], Heading: nums[4],
				Jump: row[6] == "1"},
		})
	}
	return rec, nil
}
