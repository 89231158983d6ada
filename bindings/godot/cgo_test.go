package godot

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nocallbackSafe are the C helpers that may be marked #cgo nocallback: each
// calls only interface functions that never print (so never reach an error
// handler that could call back into Go), or nothing at all.
var nocallbackSafe = map[string]string{
	"gdx_string_utf8":           "string_to_utf8_chars: a copy, no error path",
	"gdx_construct":             "not marked: NodePath parsing may print",
	"gdx_variant_copy":          "variant_new_copy: no error path",
	"gdx_variant_type":          "variant_get_type: a field read",
	"gdx_variant_from":          "from-type constructors: no error path",
	"gdx_variant_to":            "to-type constructors: no error path",
	"gdx_object_binding":        "object_get_instance_binding with NULL callbacks: a lookup",
	"gdx_object_id":             "object_get_instance_id: a field read",
	"gdx_object_from_id":        "object_get_instance_from_id: a lookup, NULL when freed",
	"gdx_cast_to":               "object_cast_to: NULL when not of the class",
	"gdx_is_main_thread":        "no engine call",
	"gdx_has_class_tags":        "no engine call",
	"gdx_has_shutdown_callback": "no engine call",
}

// TestNocallbackAudit: a helper marked nocallback that calls back into Go
// (through an engine error print reaching a script logger, say) aborts the
// game, so only the audited helpers may carry the mark.
func TestNocallbackAudit(t *testing.T) {
	b, err := os.ReadFile("cgo.go")
	require.NoError(t, err)
	marks := regexp.MustCompile(`(?m)^#cgo nocallback (\w+)$`).FindAllStringSubmatch(string(b), -1)
	require.NotEmpty(t, marks)
	for _, m := range marks {
		_, ok := nocallbackSafe[m[1]]
		assert.True(t, ok, "%s is marked nocallback but may print (not in nocallbackSafe)", m[1])
	}
	for _, printing := range []string{"gdx_string_new", "gdx_string_name_new", "gdx_packed_byte_array_ptr",
		"gdx_packed_string_array_at", "gdx_dictionary_at", "gdx_array_at", "gdx_print_error", "gdx_print"} {
		assert.NotContains(t, string(b), "#cgo nocallback "+printing+"\n", printing)
	}
}
