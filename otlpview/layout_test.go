package otlpview_test

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// TestSharedLayout holds what Metric.decode assumes when it reads the
// containers of the metric kinds with one set of names: their data points
// and aggregation temporality are numbered alike.
func TestSharedLayout(t *testing.T) {
	points := []uint32{otlppb.GaugeDataPoints, otlppb.SumDataPoints, otlppb.HistogramDataPoints, otlppb.ExponentialHistogramDataPoints, otlppb.SummaryDataPoints}
	for _, n := range points {
		if n != otlppb.GaugeDataPoints {
			t.Errorf("data_points numbered %v", points)
		}
	}
	temporality := []uint32{otlppb.SumAggregationTemporality, otlppb.HistogramAggregationTemporality, otlppb.ExponentialHistogramAggregationTemporality}
	for _, n := range temporality {
		if n != otlppb.SumAggregationTemporality {
			t.Errorf("aggregation_temporality numbered %v", temporality)
		}
	}
}
