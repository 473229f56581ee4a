package metrics

import "testing"

// The per-record calls of the pipeline's hot paths.

func BenchmarkPartitionMessage(b *testing.B) {
	p := New().Partition("t", 0)
	for i := 0; b.Loop(); i++ {
		p.Message(int64(i), int64(i)+100, 200)
	}
}

func BenchmarkPartitionMessageParallel(b *testing.B) {
	m := New()
	b.RunParallel(func(pb *testing.PB) {
		p := m.Partition("t", 0) // one partition shared: the worst case
		i := int64(0)
		for pb.Next() {
			p.Message(i, i+100, 200)
			i++
		}
	})
}

func BenchmarkInputRead(b *testing.B) {
	in := New().Input(KindFile)
	for b.Loop() {
		in.Read(1, 200)
	}
}

// ExchangesOut resolves its label on every call.
func BenchmarkExchangesOut(b *testing.B) {
	m := New()
	for b.Loop() {
		m.ExchangesOut("SUCCESS", 1)
	}
}

func BenchmarkExchangesOutParallel(b *testing.B) {
	m := New()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ExchangesOut("SUCCESS", 1)
		}
	})
}

func BenchmarkNil(b *testing.B) {
	var m *Metrics
	p := m.Partition("t", 0)
	for i := 0; b.Loop(); i++ {
		p.Message(int64(i), int64(i)+100, 200)
		m.ExchangesOut("SUCCESS", 1)
	}
}
