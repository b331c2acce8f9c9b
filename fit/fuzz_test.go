package fit

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/gquant/gquant/gguf"
)

// FuzzReadCache: any input either fails with ErrBadCache or reads as a
// cache that writes back to the same bytes.
func FuzzReadCache(f *testing.F) {
	c := NewCache()
	c.Put(1, Stats{N: 2, Num: 0.5, Den: 10, Num2: 0.2, Den2: 60, NumDen: 3})
	c.Put(7, broken)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(cacheMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadCache(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := c.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("read and written back differs: %d bytes in, %d out", len(data), out.Len())
		}
	})
}

// FuzzReadGains: any input either fails or gives finite, non-negative
// gains that write and read back unchanged.
func FuzzReadGains(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteGains(&buf, DefaultGains(), "default"); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.String())
	f.Add("attn_kv 2\nfirst 3 # comment\n")
	f.Add("ffn -1\n")
	f.Fuzz(func(t *testing.T, text string) {
		g, err := ReadGains(strings.NewReader(text), "fuzz")
		if err != nil {
			return
		}
		for _, v := range append(g.Class[:], g.First, g.Last, g.Floor, g.FloorK, g.Saturation) {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxGainValue {
				t.Fatalf("gain %v accepted", v)
			}
		}
		var out bytes.Buffer
		if err := WriteGains(&out, g, ""); err != nil {
			t.Fatal(err)
		}
		back, err := ReadGains(&out, "back")
		if err != nil {
			t.Fatal(err)
		}
		// Written with six significant digits.
		for i, v := range back.Class {
			if math.Abs(v-g.Class[i]) > 1e-5*math.Abs(g.Class[i]) {
				t.Fatalf("class %d: %v read back as %v", i, g.Class[i], v)
			}
		}
	})
}

// FuzzReadKLD: any input either fails or gives rows with positive bytes
// and divergences and a known file type.
func FuzzReadKLD(f *testing.F) {
	f.Add("mix\trules\tbytes\tkld_mean\tkld_err\nfiletype:Q4_K_M\t-\t100\t0.04\t0.001\n")
	f.Add("h\nhand:x\tattn=q8_0 (file type IQ4_KS)\t300\t0.01\t0.0001\n")
	f.Add("h\nq8_0+a\t(=q8_0\t1\t1\t1\n")
	f.Fuzz(func(t *testing.T, text string) {
		rows, err := ReadKLD(strings.NewReader(text), "fuzz")
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Bytes <= 0 || !(r.KLD > 0) || !(r.Err >= 0) || !r.FileType.Known() {
				t.Fatalf("row accepted: %+v", r)
			}
		}
	})
}

// FuzzParseReserves: any input either fails or gives reserves of a named
// device and a non-negative size.
func FuzzParseReserves(f *testing.F) {
	var md gguf.Metadata
	md.Set("general.architecture", gguf.StringValue("deepseek2"))
	md.Set("deepseek2.block_count", gguf.Uint32Value(6))
	md.Set("deepseek2.attention.kv_lora_rank", gguf.Uint32Value(512))
	md.Set("deepseek2.rope.dimension_count", gguf.Uint32Value(64))
	f.Add("GPU=kv:32768:q8_0,GPU=3GiB")
	f.Add("CPU=1.5GB")
	f.Add("GPU=kv:1:q4_0")
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseReserves(s, md)
		if err != nil {
			return
		}
		for _, r := range rs {
			if r.Device == "" || r.Bytes < 0 {
				t.Fatalf("reserve accepted: %+v", r)
			}
		}
	})
}

// FuzzParseTypes: fit --types, a list of type names or the words default
// and mainline; what it accepts has no duplicate.
func FuzzParseTypes(f *testing.F) {
	for _, s := range []string{"default", "mainline,iq4_xs", "q8_0 q4_K,,IQ1_S", "nope", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		types, err := ParseTypes(s)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, typ := range types {
			if seen[typ.String()] {
				t.Fatalf("%q: %s twice", s, typ)
			}
			seen[typ.String()] = true
		}
	})
}
