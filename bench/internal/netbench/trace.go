package netbench

import (
	"bufio"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WriteTraces writes, for each trace, DIR/<scenario>-<entity>.csv (one
// line per frame), DIR/<scenario>-<entity>.png (nearzero's along-track and
// sideways error and its timing error over time) and
// DIR/<scenario>-<entity>-methods.png (along-track error of every method).
// Ablation runs are written with the variant in the name.
func WriteTraces(dir string, traces []Trace) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	for i := range traces {
		tr := &traces[i]
		name := tr.Scenario + "-" + tr.Entity
		if tr.Variant != "" {
			name += "-" + tr.Variant
		}
		base := filepath.Join(dir, name)
		if err := writeTraceCSV(base+".csv", tr); err != nil {
			return err
		}
		if err := plotNearzero(base+".png", tr); err != nil {
			return err
		}
		if err := plotMethods(base+"-methods.png", tr); err != nil {
			return err
		}
	}
	return nil
}

func writeTraceCSV(name string, tr *Trace) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("trace: %w", cerr)
		}
	}()
	w := bufio.NewWriter(f)
	fmt.Fprint(w, "t_s,speed_mps")
	for _, m := range Methods {
		fmt.Fprintf(w, ",along_%s_m,side_%s_m", m, m)
	}
	fmt.Fprintln(w, ",timing_ms,age_ms,correction_m,path")
	g := func(x float64) string { return strconv.FormatFloat(x, 'f', 5, 64) }
	for i, t := range tr.T {
		fmt.Fprint(w, g(t))
		fmt.Fprint(w, ",", at(tr.Speed, i, g))
		for m := range Methods {
			fmt.Fprint(w, ",", at(tr.Along[m], i, g), ",", at(tr.Side[m], i, g))
		}
		path := ""
		if i < len(tr.Path) {
			path = []string{"server", "direct"}[tr.Path[i]&1]
		}
		fmt.Fprint(w, ",", at(tr.TimingMS, i, g), ",", at(tr.AgeMS, i, g), ",", at(tr.Correction, i, g), ",", path, "\n")
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	return nil
}

func at(xs []float64, i int, f func(float64) string) string {
	if i < len(xs) {
		return f(xs[i])
	}
	return ""
}

// xy pairs the trace's times with ys.
func xy(t, ys []float64) plotter.XYs {
	n := min(len(t), len(ys))
	pts := make(plotter.XYs, n)
	for i := range n {
		pts[i] = plotter.XY{X: t[i], Y: ys[i]}
	}
	return pts
}

var (
	blue   = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	orange = color.RGBA{R: 255, G: 127, B: 14, A: 255}
	green  = color.RGBA{R: 44, G: 160, B: 44, A: 255}
	grey   = color.RGBA{R: 120, G: 120, B: 120, A: 255}
)

func addLine(p *plot.Plot, name string, pts plotter.XYs, c color.Color) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("trace plot: %w", err)
	}
	l.Color = c
	l.Width = vg.Points(0.8)
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

func plotNearzero(name string, tr *Trace) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s drawn by nearzero, error vs truth", tr.Scenario, tr.Entity)
	p.X.Label.Text = "true time (s)"
	p.Y.Label.Text = "error (m); timing error (ms/100)"
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	if len(tr.Along) == 0 {
		return nil
	}
	timing := scaled(tr.TimingMS, 0.01)
	if err := addLine(p, "timing error (ms / 100)", xy(tr.T, timing), grey); err != nil {
		return err
	}
	if err := addLine(p, "sideways (m)", xy(tr.T, tr.Side[0]), green); err != nil {
		return err
	}
	if err := addLine(p, "along-track (m, + = ahead)", xy(tr.T, tr.Along[0]), blue); err != nil {
		return err
	}
	if err := p.Save(30*vg.Centimeter, 12*vg.Centimeter, name); err != nil {
		return fmt.Errorf("trace plot: %w", err)
	}
	return nil
}

func plotMethods(name string, tr *Trace) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s, along-track error by method", tr.Scenario, tr.Entity)
	p.X.Label.Text = "true time (s)"
	p.Y.Label.Text = "along-track error (m, + = drawn ahead)"
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	colors := []color.Color{blue, orange, green, color.RGBA{R: 200, A: 255}, color.RGBA{R: 128, G: 0, B: 128, A: 255},
		color.RGBA{R: 120, G: 120, B: 120, A: 255}}
	for m := len(Methods) - 1; m >= 0; m-- {
		if m >= len(tr.Along) {
			continue
		}
		if err := addLine(p, Methods[m], xy(tr.T, tr.Along[m]), colors[m%len(colors)]); err != nil {
			return err
		}
	}
	if err := p.Save(30*vg.Centimeter, 12*vg.Centimeter, name); err != nil {
		return fmt.Errorf("trace plot: %w", err)
	}
	return nil
}
