package netbench

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/nearzero/nearzero/netcode/predict"
)

// ParseAutoParams returns base with the fields named in spec changed: the
// bench's hook into Auto's constants (predict.AutoParams) for ablations.
// spec is "Field=value;Field=value..." with predict.AutoParams' exported
// field names; a duration is written as Go does ("15ms"), an array as
// comma-separated values (one value fills every element), a bool as true
// or false. For example "TailWeight=0.5;Lags=50ms".
func ParseAutoParams(base predict.AutoParams, spec string) (predict.AutoParams, error) {
	v := reflect.ValueOf(&base).Elem()
	for _, kv := range strings.Split(spec, ";") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			return base, fmt.Errorf("auto params: %q is not Field=value", kv)
		}
		f := v.FieldByName(strings.TrimSpace(name))
		if !f.IsValid() || !f.CanSet() {
			return base, fmt.Errorf("auto params: no field %q in predict.AutoParams", name)
		}
		if f.Kind() == reflect.Array {
			parts := strings.Split(val, ",")
			if len(parts) != 1 && len(parts) != f.Len() {
				return base, fmt.Errorf("auto params: %s takes 1 or %d values, not %d", name, f.Len(), len(parts))
			}
			for i := range f.Len() {
				if err := setValue(f.Index(i), parts[min(i, len(parts)-1)]); err != nil {
					return base, fmt.Errorf("auto params: %s: %w", name, err)
				}
			}
			continue
		}
		if err := setValue(f, val); err != nil {
			return base, fmt.Errorf("auto params: %s: %w", name, err)
		}
	}
	return base, nil
}

// setValue parses s into f (a duration, an integer, a float or a bool).
func setValue(f reflect.Value, s string) error {
	s = strings.TrimSpace(s)
	if f.Type() == reflect.TypeOf(time.Duration(0)) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		f.SetInt(int64(d))
		return nil
	}
	switch f.Kind() {
	case reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		f.SetInt(int64(n))
	case reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		f.SetFloat(x)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		f.SetBool(b)
	default:
		return fmt.Errorf("cannot set a %s", f.Type())
	}
	return nil
}
