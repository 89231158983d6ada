// Package prom exposes a server's metrics (server/metrics) to Prometheus:
// the standalone server registers them on its registry and serves
// /metrics. A game that embeds the server does not import this package,
// so it links no Prometheus client.
package prom

import (
	"fmt"
	"net/http"
	"runtime"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nearzero/nearzero/netcode/wire"
	"github.com/nearzero/nearzero/server/metrics"
)

// collector reads the metrics at each scrape.
type collector struct {
	fams  []metrics.Family
	descs []*prometheus.Desc
	build *prometheus.Desc
}

// Register registers m on reg, with nearzero_build_info (protocol, rules
// and Go versions).
func Register(reg prometheus.Registerer, m *metrics.Metrics) error {
	c := &collector{fams: m.Families()}
	for _, f := range c.fams {
		var labels []string
		if f.Label != "" {
			labels = []string{f.Label}
		}
		c.descs = append(c.descs, prometheus.NewDesc(metrics.Namespace+"_"+f.Name, f.Help, labels, nil))
	}
	c.build = prometheus.NewDesc(metrics.Namespace+"_build_info", "Build information; always 1.",
		[]string{"protocol", "rules", "go"}, nil)
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	return nil
}

// Handler returns reg's /metrics handler.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
	ch <- c.build
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for i, f := range c.fams {
		d := c.descs[i]
		switch {
		case f.Counter != nil:
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, f.Counter.Value())
		case f.Gauge != nil:
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, f.Gauge.Value())
		case f.Histogram != nil:
			n, sum, buckets := f.Histogram.Snapshot()
			ch <- prometheus.MustNewConstHistogram(d, n, sum, buckets)
		case f.Counters != nil:
			f.Counters.Each(func(label string, s *metrics.Counter) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, s.Value(), label)
			})
		case f.Gauges != nil:
			f.Gauges.Each(func(label string, s *metrics.Gauge) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, s.Value(), label)
			})
		}
	}
	ch <- prometheus.MustNewConstMetric(c.build, prometheus.GaugeValue, 1,
		strconv.Itoa(int(wire.ProtocolVersion)), strconv.Itoa(int(wire.RulesVersion)), runtime.Version())
}

// New returns fresh metrics registered on reg and reg's /metrics handler:
// what server.Deps.Metrics and MetricsHandler take.
func New(reg *prometheus.Registry) (*metrics.Metrics, http.Handler, error) {
	m := metrics.New()
	if err := Register(reg, m); err != nil {
		return nil, nil, err
	}
	return m, Handler(reg), nil
}
