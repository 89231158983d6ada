package netroom

import "github.com/nearzero/nearzero/client/core"

// directWatch tracks the liveness of direct links by arrival
// (client/core's DirectWatch, which the bench runs too).
type directWatch = core.DirectWatch
