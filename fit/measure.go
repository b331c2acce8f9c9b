package fit

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/quantize"
)

// KernelVersion names the kernels whose errors a cache holds: the quantize
// kernels' output, and the error measured from it, is a function of
// quantize.KernelVersion. The suffix numbers this package's way of
// measuring; change either and old cache entries stop matching.
const KernelVersion = quantize.KernelVersion + "/fit-1"

// Sampling sizes. A chunk is about chunkWeights weights of a tensor (at least
// one row of every matrix); a tensor gets up to maxChunks of them, more where
// its candidates' errors are close (see MeasureOptions.Adaptive).
const (
	DefaultChunkWeights = 1 << 16
	DefaultMaxChunks    = 4
)

// MeasureOptions adjust Measure.
type MeasureOptions struct {
	Threads      int // workers (default GOMAXPROCS)
	ChunkWeights int // weights per chunk (default DefaultChunkWeights)
	MaxChunks    int // chunks per tensor at most (default DefaultMaxChunks)
	// Cache, if set, is consulted before and filled after each measurement.
	Cache *Cache
	// Progress, if set, is called after each finished measurement with the
	// counts of measurements done and known so far.
	Progress func(done, total int)
	// Context, if set, stops the measuring when it is done (Ctrl-C):
	// Measure returns its error, and what was measured is in Cache.
	Context context.Context
}

// stopped is the error of a measuring stopped by its context.
func (o *MeasureOptions) stopped() error {
	if o.Context == nil || o.Context.Err() == nil {
		return nil
	}
	return fmt.Errorf("fit: measuring stopped: %w", context.Cause(o.Context))
}

// Request asks for the errors of one tensor in some types.
type Request struct {
	Tensor int            // index in the model
	Types  []formats.Type // types to measure (base types: see measureType)
}

// Measurement is the error of one tensor in one type.
type Measurement struct {
	Stats
	Chunks int // chunks measured
}

// MeasureReport counts the work Measure did.
type MeasureReport struct {
	// (tensor, chunk, type) measurements made and found in the cache
	Measured int   `json:"measured"`
	Cached   int   `json:"cached"`
	Weights  int64 `json:"weights"` // weights quantized
	Rows     int64 `json:"rows"`    // rows read
}

// measureType is the type whose error a candidate has: an interleaved type
// stores the rows of its base type, so it has the base type's error.
func measureType(t formats.Type) formats.Type {
	if b := t.Base(); b != t && quantize.Supported(b) {
		return b
	}
	return t
}

// exact reports whether a tensor of type src converted to t keeps every
// value: no measurement needed, the error is zero.
func exact(src, t formats.Type) bool {
	return t == src || t == formats.F32 || (t == formats.BF16 || t == formats.BF16_R16) && src == formats.BF16 ||
		t == formats.F16 && src == formats.F16
}

// sampler picks the rows of each chunk: the same rows in every matrix, in a
// Weyl sequence (s * step mod rows) that spreads any prefix over the whole
// matrix and never repeats a row.
type sampler struct {
	ne0, rows, mats int64
	perChunk        int64 // rows of each matrix per chunk
	step            int64
}

func newSampler(shape []int64, chunkWeights int) sampler {
	ne0, rows, mats := gguf.Dims(shape)
	s := sampler{ne0: ne0, rows: rows, mats: mats}
	s.perChunk = max(1, min(rows, int64(chunkWeights)/max(1, ne0*mats)))
	// The step nearest rows/phi that is coprime to rows.
	step := int64(math.Round(float64(rows) * 0.6180339887))
	for d := int64(0); ; d++ {
		if c := step + d; c >= 1 && gcd(c, rows) == 1 {
			s.step = c
			break
		}
		if c := step - d; c >= 1 && gcd(c, rows) == 1 {
			s.step = c
			break
		}
	}
	return s
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// chunks is how many chunks exist before the rows run out.
func (s sampler) chunks() int { return int((s.rows + s.perChunk - 1) / s.perChunk) }

// chunkRows lists the rows (within each matrix) of chunk k.
func (s sampler) chunkRows(k int) []int64 {
	var out []int64
	for i := int64(k) * s.perChunk; i < min(s.rows, int64(k+1)*s.perChunk); i++ {
		out = append(out, i*s.step%s.rows)
	}
	return out
}

// chunkData is one chunk of one tensor, read and ready for every type.
type chunkData struct {
	t       *tensorState
	k       int
	rows    []int64
	raw     []byte // the source bytes of the rows, matrix by matrix
	f32     []float32
	decoded sync.Once
	decErr  error
	base    xxhash.Digest // over version, shape and raw bytes
}

// tensorState holds what Measure knows of one tensor.
type tensorState struct {
	info    gguf.TensorInfo
	idx     int
	s       sampler
	imp     [2][]float32 // importance for the kernels: [0] as stored, [1] with all-zero slices made uniform
	metric  []float32    // importance for the error (zero slices uniform), nil for uniform
	weights []float64    // per-matrix weights, nil for equal
	impHash [2]xxhash.Digest
}

// Measure measures the relative error of tensors in types, in the sampled
// rows of chunk 0, and with adaptive set, more chunks for the types whose
// errors lie close together (see closeTypes).
func Measure(in *gguf.Model, im *imatrix.Matrix, reqs []Request, opts MeasureOptions, adaptive bool) (map[int]map[formats.Type]*Measurement, MeasureReport, error) {
	if opts.Threads <= 0 {
		opts.Threads = runtime.GOMAXPROCS(0)
	}
	if opts.ChunkWeights <= 0 {
		opts.ChunkWeights = DefaultChunkWeights
	}
	if opts.MaxChunks <= 0 {
		opts.MaxChunks = DefaultMaxChunks
	}
	res := map[int]map[formats.Type]*Measurement{}
	// Only the samplers live for the whole run: a tensor's importance data
	// (256 experts x 7168 columns for DeepSeek-R1) is made when its chunk is
	// read and dropped when the chunk is measured.
	samplers := map[int]sampler{}
	var rep MeasureReport
	for _, r := range reqs {
		if err := checkSource(in, r.Tensor); err != nil {
			return nil, rep, err
		}
		samplers[r.Tensor] = newSampler(in.Tensors[r.Tensor].Shape, opts.ChunkWeights)
		res[r.Tensor] = map[formats.Type]*Measurement{}
		for _, t := range r.Types {
			res[r.Tensor][t] = &Measurement{}
		}
	}
	pending := make([]Request, len(reqs))
	copy(pending, reqs)
	for k := 0; k < opts.MaxChunks && len(pending) > 0; k++ {
		if err := measureChunk(in, im, samplers, pending, k, res, opts, &rep); err != nil {
			return nil, rep, err
		}
		if !adaptive {
			break
		}
		var next []Request
		for _, r := range pending {
			if k+1 >= samplers[r.Tensor].chunks() {
				continue
			}
			if ts := closeTypes(res[r.Tensor], r.Types, in.Tensors[r.Tensor].Shape); len(ts) > 0 {
				next = append(next, Request{Tensor: r.Tensor, Types: ts})
			}
		}
		pending = next
	}
	return res, rep, nil
}

// checkSource refuses tensors whose rows cannot be read one by one.
func checkSource(in *gguf.Model, idx int) error {
	if idx < 0 || idx >= len(in.Tensors) {
		return fmt.Errorf("fit: no tensor %d", idx)
	}
	info := in.Tensors[idx].TensorInfo
	if info.Type.IsInterleaved() {
		return fmt.Errorf("fit: tensor %s is %s, a row-interleaved type: undo the repacking first (gquant repack --undo)", info.Name, info.Type)
	}
	if info.Type != formats.F32 && info.Type != formats.F16 && info.Type != formats.BF16 && !formats.CanDequantize(info.Type) {
		return fmt.Errorf("fit: tensor %s: cannot read %s weights", info.Name, info.Type)
	}
	return nil
}

func newTensorState(in *gguf.Model, im *imatrix.Matrix, idx int, s sampler) (*tensorState, error) {
	info := in.Tensors[idx].TensorInfo
	st := &tensorState{info: info, idx: idx, s: s}
	var err error
	// Which variant a type gets depends only on FailsOnZeroImportance.
	if st.imp[0], st.weights, err = importance(im, info, formats.Q8_0); err != nil {
		return nil, err
	}
	if st.imp[1], _, err = importance(im, info, formats.Q4_K); err != nil {
		return nil, err
	}
	if quantize.FailsOnZeroImportance(formats.Q8_0) || !quantize.FailsOnZeroImportance(formats.Q4_K) {
		panic("fit: the importance variants need a type that fails on zero importance and one that does not")
	}
	st.metric = st.imp[1]
	for v := range st.imp {
		d := xxhash.New()
		writeF32(d, st.imp[v])
		st.impHash[v] = *d
	}
	return st, nil
}

func writeF32(d *xxhash.Digest, v []float32) {
	if len(v) == 0 {
		return
	}
	_, _ = d.Write(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)))
}

// measureChunk measures chunk k of every pending tensor in its types, the
// quantization spread over opts.Threads workers and the reading done here.
func measureChunk(in *gguf.Model, im *imatrix.Matrix, samplers map[int]sampler, pending []Request, k int, res map[int]map[formats.Type]*Measurement, opts MeasureOptions, rep *MeasureReport) error {
	type job struct {
		c   *chunkData
		typ formats.Type
		key uint64
	}
	jobs := make(chan job, opts.Threads)
	var mu sync.Mutex
	var firstErr error
	total, done := 0, 0
	for _, r := range pending {
		total += len(r.Types)
	}
	record := func(tensor int, typ formats.Type, s Stats, cached bool, weights int64) {
		mu.Lock()
		defer mu.Unlock()
		m := res[tensor][typ]
		if m.Chunks == 0 {
			m.Stats = s
		} else {
			m.Merge(s)
		}
		m.Chunks++
		if cached {
			rep.Cached++
		} else {
			rep.Measured++
			rep.Weights += weights
		}
		done++
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
	}
	var wg sync.WaitGroup
	for w := 0; w < opts.Threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch measureScratch
			for j := range jobs {
				mu.Lock()
				failed := firstErr != nil
				mu.Unlock()
				if failed || opts.stopped() != nil {
					continue
				}
				s, err := j.c.measure(j.typ, &scratch)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("fit: measuring %s as %s: %w", j.c.t.info.Name, j.typ, err)
					}
					mu.Unlock()
					continue
				}
				if opts.Cache != nil {
					opts.Cache.Put(j.key, s)
				}
				record(j.c.t.idx, j.typ, s, false, int64(len(j.c.rows))*j.c.t.s.mats*j.c.t.s.ne0)
			}
		}()
	}
	var readErr error
	for _, r := range pending {
		if k >= samplers[r.Tensor].chunks() {
			continue
		}
		if readErr = opts.stopped(); readErr != nil {
			break
		}
		st, err := newTensorState(in, im, r.Tensor, samplers[r.Tensor])
		if err != nil {
			readErr = err
			break
		}
		c, err := readChunk(in, st, k)
		if err != nil {
			readErr = err
			break
		}
		rep.Rows += int64(len(c.rows)) * st.s.mats
		for _, typ := range r.Types {
			key := c.key(typ)
			if exact(st.info.Type, typ) {
				record(st.idx, typ, Stats{N: float64(len(c.rows)) * float64(st.s.mats)}, true, 0)
				continue
			}
			if opts.Cache != nil {
				if s, ok := opts.Cache.Get(key); ok {
					record(st.idx, typ, s, true, 0)
					continue
				}
			}
			jobs <- job{c: c, typ: typ, key: key}
		}
	}
	close(jobs)
	wg.Wait()
	if readErr != nil {
		return readErr
	}
	if firstErr != nil {
		return firstErr
	}
	// Jobs skipped for a stop have no measurement: the results are not
	// whole.
	return opts.stopped()
}

// readChunk reads the source bytes of chunk k.
func readChunk(in *gguf.Model, st *tensorState, k int) (*chunkData, error) {
	c := &chunkData{t: st, k: k, rows: st.s.chunkRows(k)}
	rowSize, err := st.info.Type.RowSize(st.s.ne0)
	if err != nil {
		return nil, err
	}
	c.raw = make([]byte, int64(len(c.rows))*st.s.mats*rowSize)
	r := in.TensorReader(st.idx)
	off := int64(0)
	for m := int64(0); m < st.s.mats; m++ {
		for _, row := range c.rows {
			if _, err := r.ReadAt(c.raw[off:off+rowSize], (m*st.s.rows+row)*rowSize); err != nil {
				return nil, fmt.Errorf("fit: reading %s row %d of matrix %d: %w", st.info.Name, row, m, err)
			}
			off += rowSize
		}
	}
	d := xxhash.New()
	var hdr [8]byte
	_, _ = d.WriteString(KernelVersion)
	for _, v := range []int64{int64(st.info.Type), st.s.ne0, int64(len(c.rows)), st.s.mats} {
		binary.LittleEndian.PutUint64(hdr[:], uint64(v))
		_, _ = d.Write(hdr[:])
	}
	for _, w := range st.weights {
		binary.LittleEndian.PutUint64(hdr[:], math.Float64bits(w))
		_, _ = d.Write(hdr[:])
	}
	_, _ = d.Write(c.raw)
	c.base = *d
	return c, nil
}

// key is the cache key of the chunk measured as typ: the rows, the
// importance data the kernel gets, the type and the kernel version.
func (c *chunkData) key(typ formats.Type) uint64 {
	v := 0
	if quantize.FailsOnZeroImportance(typ) {
		v = 1
	}
	d := c.base
	var b [9]byte
	b[0] = byte(v)
	if c.t.imp[v] == nil {
		b[0] = 2
	}
	binary.LittleEndian.PutUint64(b[1:], uint64(typ))
	_, _ = d.Write(b[:])
	// The importance data: its digest's state, summed (cheaper than
	// hashing the slice again for every type).
	binary.LittleEndian.PutUint64(b[1:], c.t.impHash[v].Sum64())
	_, _ = d.Write(b[1:])
	return d.Sum64()
}

func (c *chunkData) decode() error {
	c.decoded.Do(func() {
		st := c.t
		c.f32 = make([]float32, int64(len(c.rows))*st.s.mats*st.s.ne0)
		c.decErr = formats.DequantizeRows(st.info.Type, int(st.s.ne0), c.raw, c.f32)
	})
	return c.decErr
}

type measureScratch struct {
	q     []byte
	deq   []float32
	group []float32 // one row group, for UniformWhereNotFinite
}

// measure quantizes the chunk as typ, one kernel call per matrix with that
// matrix's importance, and returns the error statistics.
func (c *chunkData) measure(typ formats.Type, sc *measureScratch) (Stats, error) {
	var s Stats
	if err := c.decode(); err != nil {
		return s, err
	}
	st := c.t
	ne0 := int(st.s.ne0)
	nr := len(c.rows)
	rs, err := typ.RowSize(int64(ne0))
	if err != nil {
		return s, err
	}
	if cap(sc.q) < nr*int(rs) {
		sc.q = make([]byte, nr*int(rs))
	}
	if cap(sc.deq) < nr*ne0 {
		sc.deq = make([]float32, nr*ne0)
	}
	q, deq := sc.q[:nr*int(rs)], sc.deq[:nr*ne0]
	v := 0
	if quantize.FailsOnZeroImportance(typ) {
		v = 1
	}
	for m := 0; m < int(st.s.mats); m++ {
		src := c.f32[m*nr*ne0 : (m+1)*nr*ne0]
		var im, metric []float32
		if st.imp[v] != nil {
			im = st.imp[v][m*ne0 : (m+1)*ne0]
			metric = st.metric[m*ne0 : (m+1)*ne0]
		}
		w := 1.0
		if st.weights != nil {
			w = st.weights[m]
		}
		if err := quantize.QuantizeRowsInto(q, typ, nr, ne0, src, im); err != nil {
			return s, err
		}
		if err := formats.DequantizeRows(typ, ne0, q, deq); err != nil {
			return s, err
		}
		if formats.FirstNonFinite(deq) >= 0 {
			// Measured as a quantize run writes such rows.
			if im == nil {
				return broken, nil
			}
			g := typ.Interleave() * ne0
			if cap(sc.group) < g {
				sc.group = make([]float32, g)
			}
			_, finite, err := quantize.Options{}.UniformWhereNotFinite(q, typ, nr, ne0, src, sc.group[:g])
			if err != nil {
				return s, err
			}
			if !finite {
				return broken, nil
			}
			if err := formats.DequantizeRows(typ, ne0, q, deq); err != nil {
				return s, err
			}
		}
		for r := 0; r < nr; r++ {
			num, den := rowError(src[r*ne0:(r+1)*ne0], deq[r*ne0:(r+1)*ne0], metric)
			s.Add(w*num, w*den)
		}
	}
	return s, nil
}

// rowError returns sum v (w-q)^2 and sum v w^2 over one row (v = 1 when
// metric is nil).
func rowError(w, q, metric []float32) (num, den float64) {
	if metric == nil {
		for j, x := range w {
			d := float64(x - q[j])
			num += d * d
			den += float64(x) * float64(x)
		}
		return num, den
	}
	for j, x := range w {
		d := float64(x - q[j])
		v := float64(metric[j])
		num += v * d * d
		den += v * float64(x) * float64(x)
	}
	return num, den
}
