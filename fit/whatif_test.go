package fit

import (
	"testing"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/planner"
)

// What more bytes would buy is never a negative loss or divergence: when
// they make every tensor of a device exact, its loss is 0 exactly and the
// model's divergence is the other devices' loss. It was predicted as the
// device's loss plus each change's difference, which cancels to -2.2e-16
// for losses 0.1, 0.1 and 1.1 (gquant fit printed "KL divergence
// -9.487e-20").
func TestMoreNeverBelowZero(t *testing.T) {
	tensor := func(name, dev string, loss float64) Tensor {
		return Tensor{Name: name, Device: dev, Source: formats.BF16, Quantized: true, Cands: []Candidate{
			{Type: formats.Q8_0, Bytes: 10, Loss: loss},
			{Type: formats.BF16, Bytes: 20},
		}}
	}
	ts := []Tensor{tensor("a", "CPU", 0.1), tensor("b", "CPU", 0.1), tensor("c", "CPU", 1.1), tensor("d", "GPU", 0.7)}
	budgets := map[string]*planner.Budget{"CPU": {Device: "CPU", Bytes: 30, Text: "30"}, "GPU": {Device: "GPU", Bytes: 10, Text: "10"}}
	var res Result
	if _, err := optimize(ts, []string{"CPU", "GPU"}, budgets, Options{MoreBytes: 30}, Gains{}, &res); err != nil {
		t.Fatal(err)
	}
	cpu, gpu := res.Devices[0], res.Devices[1]
	if cpu.More == nil || !cpu.More.Binding || gpu.More == nil || !gpu.More.Binding {
		t.Fatalf("more bytes change nothing: %+v %+v", cpu.More, gpu.More)
	}
	if cpu.More.Loss != 0 || cpu.More.KLD != gpu.Loss {
		t.Errorf("CPU with more bytes: loss %g, divergence %g; want 0 and the GPU's loss %g", cpu.More.Loss, cpu.More.KLD, gpu.Loss)
	}
	if gpu.More.Loss != 0 || gpu.More.KLD != cpu.Loss {
		t.Errorf("GPU with more bytes: loss %g, divergence %g; want 0 and the CPU's loss %g", gpu.More.Loss, gpu.More.KLD, cpu.Loss)
	}
}
