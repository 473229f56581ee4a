package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot is one scrape of a /metrics endpoint, parsed: what a test reads
// to check the counters of a real process against its dataset.
type Snapshot struct {
	families map[string]*dto.MetricFamily
}

// Scrape fetches url (a /metrics endpoint) in the Prometheus text format and
// parses it with the reference parser (prometheus/common/expfmt).
func Scrape(ctx context.Context, url string) (*Snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics: scrape %s: %w", url, err)
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("metrics: scrape %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("metrics: scrape %s: status %s: %q", url, resp.Status, body)
	}
	return Parse(resp.Body)
}

// Parse reads an exposition in the Prometheus text format.
func Parse(r io.Reader) (*Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("metrics: parse exposition: %w", err)
	}
	return &Snapshot{families: fams}, nil
}

// Families returns the parsed metric families by name.
func (s *Snapshot) Families() map[string]*dto.MetricFamily {
	return s.families
}

// Value returns the value of the counter or gauge series name whose labels
// are exactly labels (nil or empty for a series without labels; a label
// given as "" matches a series where the label is empty or absent, as in
// the exposition format). ok is false when there is no such series.
func (s *Snapshot) Value(name string, labels map[string]string) (v float64, ok bool) {
	for _, m := range s.series(name) {
		if sameLabels(m, labels) {
			return value(m)
		}
	}
	return 0, false
}

// Sum returns the sum of the counter or gauge series name whose labels
// include match (nil matches every series), and how many series it added.
func (s *Snapshot) Sum(name string, match map[string]string) (sum float64, n int) {
	for _, m := range s.series(name) {
		if hasLabels(m, match) {
			if v, ok := value(m); ok {
				sum += v
				n++
			}
		}
	}
	return sum, n
}

// HistogramCount returns the observation count and sum of the histogram
// series name whose labels are exactly labels.
func (s *Snapshot) HistogramCount(name string, labels map[string]string) (count uint64, sum float64, ok bool) {
	for _, m := range s.series(name) {
		if h := m.GetHistogram(); h != nil && sameLabels(m, labels) {
			return h.GetSampleCount(), h.GetSampleSum(), true
		}
	}
	return 0, 0, false
}

func (s *Snapshot) series(name string) []*dto.Metric {
	if s == nil {
		return nil
	}
	if f := s.families[name]; f != nil {
		return f.GetMetric()
	}
	return nil
}

func value(m *dto.Metric) (float64, bool) {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue(), true
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue(), true
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// labelMap returns m's labels without the empty ones: in the text format
// an empty label and an absent one are the same series.
func labelMap(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		if l.GetValue() != "" {
			out[l.GetName()] = l.GetValue()
		}
	}
	return out
}

func sameLabels(m *dto.Metric, want map[string]string) bool {
	have := labelMap(m)
	n := 0
	for k, v := range want {
		if v == "" {
			continue
		}
		if have[k] != v {
			return false
		}
		n++
	}
	return n == len(have)
}

func hasLabels(m *dto.Metric, match map[string]string) bool {
	have := labelMap(m)
	for k, v := range match {
		if have[k] != v {
			return false
		}
	}
	return true
}
