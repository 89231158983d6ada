package entity

import (
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearzero/nearzero/client/netroom"
	"github.com/nearzero/nearzero/internal/testkit"
	"github.com/nearzero/nearzero/netcode/geom"
	"github.com/nearzero/nearzero/netcode/predict"
	"github.com/nearzero/nearzero/netcode/protocol"
	"github.com/nearzero/nearzero/server"
)

type zzPath struct{ t, x, z []float64 }

func zzNewPath(seed uint64, dur, speed float64) zzPath {
	r := rand.New(rand.NewPCG(seed, 0x6e7a))
	var w zzPath
	var t, x, z float64
	heading := 0
	add := func() { w.t, w.x, w.z = append(w.t, t), append(w.x, x), append(w.z, z) }
	add()
	for t < dur {
		hold, v := 0.2+0.5*r.Float64(), speed
		if r.Float64() < 0.15 {
			v = 0
		} else {
			heading = (heading + 1 + r.IntN(7)) % 8
		}
		if math.Abs(x) > 10 || math.Abs(z) > 10 {
			heading, v = (int(math.Round(math.Atan2(-z, -x)/(math.Pi/4)))+8)%8, speed
		}
		a := float64(heading) * math.Pi / 4
		x, z, t = x+v*math.Cos(a)*hold, z+v*math.Sin(a)*hold, t+hold
		add()
	}
	return w
}

func (w zzPath) at(s float64) (geom.Vec3, geom.Vec3) {
	if s <= 0 {
		return geom.Vec3{X: w.x[0], Z: w.z[0]}, geom.Vec3{}
	}
	i := 1
	for i < len(w.t)-1 && w.t[i] < s {
		i++
	}
	h := w.t[i] - w.t[i-1]
	f := (s - w.t[i-1]) / h
	vel := geom.Vec3{X: (w.x[i] - w.x[i-1]) / h, Z: (w.z[i] - w.z[i-1]) / h}
	return geom.Vec3{X: w.x[i-1], Z: w.z[i-1]}.Add(vel.Scale(f * h)), vel
}

func TestZZCharacterE2E(t *testing.T) {
	oneWay := 100 * time.Millisecond
	delay := 0
	if s := os.Getenv("ZZ_DELAY"); s != "" {
		delay, _ = strconv.Atoi(s)
	}
	srv := testkit.StartServer(t, server.Deps{})
	newRoom := func(name string) *netroom.Room {
		cfg := netroom.Config{Server: srv.Addr, NoDirect: true}
		cfg.Options.Lag.Latency = oneWay / 2
		r, err := netroom.New(cfg)
		require.NoError(t, err)
		r.SetName(name)
		t.Cleanup(func() { r.Close(); r.Wait(5 * time.Second) })
		return r
	}
	ann, bob := newRoom("Ann"), newRoom("Bob")
	if delay > 0 {
		require.NoError(t, ann.SetInputDelay(protocol.InputDelay{Mode: protocol.InputDelayFixed, US: int64(delay) * 1000}))
	}
	frame := func() {
		ann.Update(ann.Now())
		bob.Update(bob.Now())
		ann.Route()
		bob.Route()
	}
	wait := func(cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			require.True(t, time.Now().Before(deadline), "timed out")
			frame()
			time.Sleep(2 * time.Millisecond)
		}
	}
	require.NoError(t, ann.Create())
	wait(ann.InRoom)
	require.NoError(t, bob.Join(ann.Code()))
	wait(func() bool { return bob.InRoom() && bob.Synced() && ann.Synced() && len(ann.Players()) == 2 })

	annBody := NewPredictor()
	annBody.SetDim(Dim3D)
	annBody.Ready(ann)
	remote, err := NewRemote(predict.Config{Auto: true})
	require.NoError(t, err)
	require.NoError(t, bob.Bind(ann.Slot(), remote))

	path := zzNewPath(21, 60, 6)
	origin := time.Now()
	const step = time.Second / 60
	var errs []float64
	var lags, ages float64
	n := 0
	dur := 25 * time.Second
	for i := 0; time.Since(origin) < dur; i++ {
		w := time.Since(origin).Seconds()
		now := ann.Now()
		pos, vel := path.at(w)
		annBody.Sample(now, pos.Add(geom.Vec3{Y: 1}), geom.Identity, vel, true)
		frame()
		w2 := time.Since(origin).Seconds()
		pose, _ := remote.Frame(bob.Now())
		d := float64(bob.InputDelay()) / 1e9
		if pose.Valid && w2 > 6 {
			truth, _ := path.at(w2 - d)
			errs = append(errs, pose.Pos.Sub(truth.Add(geom.Vec3{Y: 1})).Len())
			lags += remote.RenderLag().Seconds() * 1000
			ages += pose.Age.Seconds() * 1000
			n++
		}
		time.Sleep(step - time.Since(origin)%step)
	}
	sort.Float64s(errs)
	var sum float64
	for _, e := range errs {
		sum += e
	}
	t.Logf("one way %v delay %d ms: %d frames, mean %.3f p95 %.3f max %.3f; render lag %.0f ms, age %.0f ms, in force %v",
		oneWay, delay, len(errs), sum/float64(len(errs)), errs[len(errs)*95/100], errs[len(errs)-1], lags/float64(n), ages/float64(n), bob.InputDelay())
}
