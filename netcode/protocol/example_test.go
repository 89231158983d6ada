package protocol_test

import (
	"fmt"

	"github.com/nearzero/nearzero/netcode/protocol"
)

func ExampleParseRoomCode() {
	for _, s := range []string{"abc-def", "https://play.example.com/join/XYZ234", "ABCDE0"} {
		code, err := protocol.ParseRoomCode(s)
		fmt.Printf("%q %v\n", code, err)
	}
	// Output:
	// "ABCDEF" <nil>
	// "XYZ234" <nil>
	// "" protocol: not a room code or invite link
}

func ExampleDecode() {
	frame := protocol.MustMarshal(&protocol.Join{Code: "ABCDEF", Via: protocol.ViaLink})
	m, err := protocol.Decode(frame)
	if err != nil {
		panic(err)
	}
	j := m.(*protocol.Join)
	fmt.Println(protocol.TypeName(m.Type()), j.Code, j.Via, len(frame), "bytes")
	// Output: join ABCDEF link 34 bytes
}
