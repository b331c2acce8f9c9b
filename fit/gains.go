package fit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/internal/text"
)

// Class groups tensors whose error costs the same per unit: a gain per class
// turns a tensor's measured relative error into its share of the predicted
// loss.
type Class int

const (
	ClassOther      Class = iota // any other quantized tensor
	ClassAttn                    // attention: the query side (attn_q, attn_q_a, attn_q_b) and anything else named attn_
	ClassAttnKV                  // attention: keys and values (attn_k, attn_v, attn_qkv, attn_kv_a_mqa, attn_kv_b, attn_k_b, attn_v_b)
	ClassAttnOut                 // attention: attn_output
	ClassShexp                   // shared experts (ffn_*_shexp)
	ClassFFN                     // dense feed-forward (ffn_gate, ffn_up, ffn_down)
	ClassExpsGateUp              // routed experts' ffn_gate_exps / ffn_up_exps / ffn_gate_up_exps
	ClassExpsDown                // routed experts' ffn_down_exps
	ClassTokenEmbd               // token_embd (and per_layer_token_embd)
	ClassOutput                  // output
	numClasses
)

var classNames = [numClasses]string{"other", "attn_q", "attn_kv", "attn_output", "shexp", "ffn", "exps_gate_up", "exps_down", "token_embd", "output"}

func (c Class) String() string {
	if c >= 0 && c < numClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// Classify returns a tensor's class and its layer (blk.N; -1 for tensors
// outside the blocks).
func Classify(name string) (Class, int) {
	layer := -1
	if rest, ok := strings.CutPrefix(name, "blk."); ok {
		if i := strings.IndexByte(rest, '.'); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil && n >= 0 {
				layer = n
			}
		}
	}
	switch {
	case name == "token_embd.weight" || name == "per_layer_token_embd.weight":
		return ClassTokenEmbd, layer
	case name == "output.weight":
		return ClassOutput, layer
	case strings.Contains(name, "ffn_down_exps"):
		return ClassExpsDown, layer
	case strings.Contains(name, "_exps"):
		return ClassExpsGateUp, layer
	case strings.Contains(name, "_shexp"):
		return ClassShexp, layer
	case strings.Contains(name, ".attn_output."):
		return ClassAttnOut, layer
	case strings.Contains(name, ".attn_k") || strings.Contains(name, ".attn_v") || strings.Contains(name, ".attn_qkv"):
		return ClassAttnKV, layer
	case strings.Contains(name, ".attn_"):
		return ClassAttn, layer
	case strings.Contains(name, ".ffn_gate.") || strings.Contains(name, ".ffn_up.") || strings.Contains(name, ".ffn_down.") ||
		strings.Contains(name, ".ffn_gate_up."):
		return ClassFFN, layer
	}
	return ClassOther, layer
}

// Gains turn measured errors into a predicted loss (in units of KL
// divergence to the unquantized model). A tensor of class c in layer l of
// n, quantized with relative error e, adds
//
//	Class[c] * depth(l) * (e + Floor)
//
// where depth interpolates geometrically from First at layer 0 to Last at
// layer n-1 (tensors outside the blocks have depth 1), and Floor is the
// error every quantized type adds beyond its weight error (the matrix
// products of quantized weights also quantize their activations); a tensor
// kept in bf16/f16/f32 adds nothing.
type Gains struct {
	Class       [numClasses]float64
	First, Last float64
	Floor       float64
	FloorK      float64
	Saturation  float64
}

// KLD is the divergence a loss predicts: the loss itself while it is small,
// bending towards Saturation (when set) as the quant breaks down.
func (g *Gains) KLD(loss float64) float64 {
	if g.Saturation <= 0 {
		return loss
	}
	return loss / (1 + loss/g.Saturation)
}

// defaultGains are fitted by `gquant fit calibrate` to the KL divergences
// measured by ik_llama.cpp's llama-perplexity on the medium DeepSeek-V2-Lite
// shaped model (../shared/models/medium/kld.tsv, 18 quants, with its
// importance matrix): see TestDefaultGainsAreCalibrated, which refits them
// from the measurements kept in testdata/medium-measure.tsv.
//
// What they say: per unit of relative error the attention and the dense
// FFN cost most, then the token embeddings and the shared experts, the
// output and the routed experts least; and the first blocks matter several
// times more than the last.
var defaultGains = Gains{
	Class: [numClasses]float64{
		ClassOther:      0.17, // no mix measured it: the geometric mean of the others
		ClassAttn:       0.0621,
		ClassAttnKV:     0.420,
		ClassAttnOut:    0.0862,
		ClassShexp:      0.0665,
		ClassFFN:        0.545,
		ClassExpsGateUp: 0.0359,
		ClassExpsDown:   0.0414,
		ClassTokenEmbd:  2.16,
		ClassOutput:     0.428,
	},
	First: 2.44, Last: 0.411,
	Floor: 6.35e-05, FloorK: 0.000226,
	Saturation: 0.799,
}

// DefaultGains returns the built-in gains (defaultGains, a copy).
func DefaultGains() Gains { return defaultGains }

// Depth returns the layer multiplier of layer l of n.
func (g *Gains) Depth(layer, nLayer int) float64 {
	if layer < 0 || nLayer <= 1 {
		return 1
	}
	x := math.Min(1, float64(layer)/float64(nLayer-1))
	return math.Exp((1-x)*math.Log(g.First) + x*math.Log(g.Last))
}

// Gain returns the multiplier of a tensor's error.
func (g *Gains) Gain(c Class, layer, nLayer int) float64 {
	return g.Class[c] * g.Depth(layer, nLayer)
}

// maxGainValue bounds every value of a gains file: above the e^40 that
// calibrate writes at most, and small enough that a gain times the depth
// times (error + floor) stays a finite loss (see maxLoss).
const maxGainValue = 1e18

// ErrBadGains is wrapped by errors reading a gains file.
var ErrBadGains = errors.New("fit: bad gains file")

// gainKeys lists the names a gains file uses, in the order WriteGains writes them.
func gainKeys() []string {
	keys := append([]string(nil), classNames[:]...)
	return append(keys, "first", "last", "floor", "floor_k", "saturation")
}

func (g *Gains) field(key string) *float64 {
	for c, n := range classNames {
		if n == key {
			return &g.Class[c]
		}
	}
	switch key {
	case "first":
		return &g.First
	case "last":
		return &g.Last
	case "floor":
		return &g.Floor
	case "floor_k":
		return &g.FloorK
	case "saturation":
		return &g.Saturation
	}
	return nil
}

// ReadGains reads a gains file: `NAME VALUE` per line (NAME one of the
// classes, first, last or floor), # comments. Names not given keep their
// DefaultGains value; a file that gives none is an error.
func ReadGains(r io.Reader, path string) (Gains, error) {
	g := DefaultGains()
	sc := bufio.NewScanner(r)
	line := 0
	seen := map[string]int{}
	for sc.Scan() {
		line++
		entry := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(entry, '#'); i >= 0 {
			entry = strings.TrimSpace(entry[:i])
		}
		if entry == "" {
			continue
		}
		// The quotes are cut: a binary file given by mistake has lines of
		// kilobytes.
		f := strings.Fields(entry)
		if len(f) != 2 {
			return g, fmt.Errorf("%w: %s:%d: want NAME VALUE, got %s", ErrBadGains, path, line, text.Quote(entry, text.QuoteMax))
		}
		p := g.field(f[0])
		if p == nil {
			return g, fmt.Errorf("%w: %s:%d: unknown name %s (names: %s)", ErrBadGains, path, line, text.Quote(f[0], text.QuoteMax), strings.Join(gainKeys(), " "))
		}
		if prev, dup := seen[f[0]]; dup {
			return g, fmt.Errorf("%w: %s:%d: %s given twice (first on line %d)", ErrBadGains, path, line, f[0], prev)
		}
		seen[f[0]] = line
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return g, fmt.Errorf("%w: %s:%d: %s: %s is not a finite non-negative number", ErrBadGains, path, line, f[0], text.Quote(f[1], text.QuoteMax))
		}
		if v > maxGainValue {
			return g, fmt.Errorf("%w: %s:%d: %s: %s is out of range: gains are at most %g (calibrate writes at most e^%d, about 2.4e17; larger ones overflow the loss)",
				ErrBadGains, path, line, f[0], text.Quote(f[1], text.QuoteMax), maxGainValue, maxLogGain)
		}
		if (f[0] == "first" || f[0] == "last") && v == 0 {
			return g, fmt.Errorf("%w: %s:%d: %s must be positive", ErrBadGains, path, line, f[0])
		}
		*p = v
	}
	if err := sc.Err(); err != nil {
		return g, fmt.Errorf("fit: reading %s: %w", path, err)
	}
	if len(seen) == 0 {
		// A file with no gain at all is not a partial table but a mistake
		// (an empty or cut file, the wrong file): it gave the built-in
		// gains without a word.
		return g, fmt.Errorf("%w: %s holds no gains (NAME VALUE lines; names: %s)", ErrBadGains, path, strings.Join(gainKeys(), " "))
	}
	return g, nil
}

// LoadGains reads a gains file from disk: a regular file (a named pipe or
// a device is an error, never a read that blocks; see gguf.OpenRegular).
func LoadGains(path string) (Gains, error) {
	f, _, err := gguf.OpenRegular(path)
	if err != nil {
		return DefaultGains(), fmt.Errorf("fit: %w", err)
	}
	defer f.Close()
	return ReadGains(f, path)
}

// WriteGains writes g in the form ReadGains reads, with comment as a
// leading # comment (may be empty).
func WriteGains(w io.Writer, g Gains, comment string) error {
	bw := bufio.NewWriter(w)
	for _, l := range strings.Split(strings.TrimSpace(comment), "\n") {
		if l != "" {
			fmt.Fprintf(bw, "# %s\n", l)
		}
	}
	keys := gainKeys()
	width := 0
	for _, k := range keys {
		width = max(width, len(k))
	}
	for _, k := range keys {
		fmt.Fprintf(bw, "%-*s %s\n", width, k, strconv.FormatFloat(*g.field(k), 'g', 6, 64))
	}
	return bw.Flush()
}

// MarshalJSON writes the gains as an object keyed by the names a gains
// file uses.
func (g Gains) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range gainKeys() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", k, strconv.FormatFloat(*g.field(k), 'g', -1, 64))
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}
