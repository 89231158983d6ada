package depsprobe

import (
	_ "github.com/coder/websocket"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_golang/prometheus/testutil"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/stretchr/testify/assert"
	_ "github.com/stretchr/testify/require"
	_ "github.com/x448/float16"
	_ "go.uber.org/goleak"
	_ "golang.org/x/term"
	_ "gonum.org/v1/plot"
	_ "gonum.org/v1/plot/plotter"
	_ "gonum.org/v1/plot/vg"
	_ "modernc.org/sqlite"
	_ "pgregory.net/rapid"
)
