package fit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/gguf"
	"github.com/gquant/gquant/imatrix"
	"github.com/gquant/gquant/recipes"
)

// KLDRow is one measured quant: a mix (a file type with rules on top) and
// the KL divergence to the unquantized model that llama-perplexity
// measured for it.
type KLDRow struct {
	Mix      string
	Rules    string // as written ("-" for none)
	Bytes    int64  // file size
	KLD, Err float64
	FileType recipes.FileType
	RuleSet  *recipes.RuleSet // nil for none
}

// ErrBadKLD is wrapped by errors reading a KLD table.
var ErrBadKLD = errors.New("fit: bad KLD table")

// ReadKLD reads a table like ../shared/models/medium/kld.tsv: a header
// (optional: a first line that reads as a row is a row), then
// tab-separated mix, rules, bytes, kld_mean, kld_err. The file type of a
// row is the X of a mix named filetype:X, else the X of a rules column
// ending in "(file type X)", else the part of the mix name before '+'
// (q8_0+attn-iq2_ks is Q8_0 with the rules); the rules are --custom-q
// rules, "-" for none.
func ReadKLD(r io.Reader, path string) ([]KLDRow, error) {
	sc := bufio.NewScanner(r)
	var rows []KLDRow
	line := 0
	first := true
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		row, err := parseKLDRow(text)
		if first {
			first = false
			if err != nil && !looksLikeKLDRow(text) {
				continue // the header
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %w", ErrBadKLD, path, line, err)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fit: reading %s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%w: %s has no rows", ErrBadKLD, path)
	}
	return rows, nil
}

// parseKLDRow reads one row of a KLD table.
func parseKLDRow(text string) (KLDRow, error) {
	f := strings.Split(text, "\t")
	fail := func(format string, args ...any) (KLDRow, error) {
		return KLDRow{}, fmt.Errorf(format, args...)
	}
	if len(f) != 5 {
		return fail("%d fields, want 5 (mix, rules, bytes, kld_mean, kld_err)", len(f))
	}
	row := KLDRow{Mix: f[0], Rules: f[1]}
	var err error
	if row.Bytes, err = strconv.ParseInt(f[2], 10, 64); err != nil || row.Bytes <= 0 {
		return fail("bytes %q", f[2])
	}
	if row.KLD, err = strconv.ParseFloat(f[3], 64); err != nil || !(row.KLD > 0) || math.IsInf(row.KLD, 0) {
		return fail("kld_mean %q is not a positive number", f[3])
	}
	if row.Err, err = strconv.ParseFloat(f[4], 64); err != nil || !(row.Err >= 0) || math.IsInf(row.Err, 0) {
		return fail("kld_err %q is not a non-negative number", f[4])
	}
	ftName, rules := "", strings.TrimSpace(f[1])
	if name, ok := strings.CutPrefix(f[0], "filetype:"); ok {
		ftName = name
	}
	if i := strings.LastIndex(rules, "(file type "); i >= 0 && strings.HasSuffix(rules, ")") {
		if ftName == "" {
			ftName = strings.TrimSpace(rules[i+len("(file type ") : len(rules)-1])
		}
		rules = strings.TrimSpace(rules[:i])
	}
	if ftName == "" {
		name, _, ok := strings.Cut(f[0], "+")
		if !ok {
			return fail("mix %q names no file type (filetype:X, X+name, or rules ending in \"(file type X)\")", f[0])
		}
		ftName = name
	}
	ft, copyOnly, err := recipes.ParseFileType(ftName)
	switch {
	case err != nil:
		return fail("file type %q: %v", ftName, err)
	case copyOnly:
		return fail("file type %q only copies the input, it quantizes nothing: name the file type the quant was made with", ftName)
	}
	row.FileType = ft
	if rules != "-" && rules != "" {
		if row.RuleSet, err = recipes.ParseCustomQ(rules); err != nil {
			return fail("rules: %v", err)
		}
	}
	return row, nil
}

// looksLikeKLDRow reports whether a first line that does not parse is
// nonetheless a row rather than the header: five fields, the bytes and
// kld_mean numbers. Such a line is an error, not a header skipped.
func looksLikeKLDRow(text string) bool {
	f := strings.Split(text, "\t")
	if len(f) != 5 {
		return false
	}
	_, e1 := strconv.ParseInt(f[2], 10, 64)
	_, e2 := strconv.ParseFloat(f[3], 64)
	return e1 == nil || e2 == nil
}

// LoadKLD reads a KLD table from disk: a regular file (a named pipe or a
// device is an error, never a read that blocks; see gguf.OpenRegular).
func LoadKLD(path string) ([]KLDRow, error) {
	f, _, err := gguf.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	defer f.Close()
	return ReadKLD(f, path)
}

// errorTable holds measured relative errors: [tensor][measured type].
type errorTable []map[formats.Type]float64

// mixTerm is one quantized tensor of a mix: what its loss is made of.
type mixTerm struct {
	class Class
	layer int
	err   float64
	quant bool // quantized: pays the floor
	big   bool // a 256-weight block type
}

// mixTerms lists the quantized tensors of the mix a row describes, with
// their measured errors. need lists the (tensor, type) pairs that have no
// measurement in errs (then terms is nil).
func mixTerms(m model, hasIm bool, row KLDRow, errs errorTable) (terms []mixTerm, need map[int][]formats.Type, err error) {
	plan, err := m.selectAll(row.FileType, row.RuleSet, hasIm)
	if err != nil {
		return nil, nil, fmt.Errorf("fit: mix %s: %w", row.Mix, err)
	}
	need = map[int][]formats.Type{}
	for i, c := range plan.Choices {
		if !c.Quantize {
			continue
		}
		cls, layer := Classify(c.Name)
		if exact(m.tensors[i].Type, c.Type) {
			terms = append(terms, mixTerm{class: cls, layer: layer})
			continue
		}
		mt := measureType(c.Type)
		e, ok := errs[i][mt]
		if !ok {
			need[i] = append(need[i], mt)
			continue
		}
		if math.IsInf(e, 1) {
			// A broken measurement: the quant the row measured holds
			// weights that are not finite, and its loss would be +Inf,
			// which made every prediction and the fit NaN (and the
			// start gains were written as fitted).
			return nil, nil, fmt.Errorf("fit: mix %s: %s as %s gives weights that are not finite (the kernel fails on its data or importance)", row.Mix, c.Name, c.Type)
		}
		terms = append(terms, mixTerm{class: cls, layer: layer, err: e, quant: true, big: c.Type.BlockSize() >= 256})
	}
	if len(need) > 0 {
		return nil, need, nil
	}
	return terms, nil, nil
}

// predict returns the predicted loss of a mix.
func predict(terms []mixTerm, g *Gains, nLayer int) float64 {
	var l float64
	for _, t := range terms {
		f := 0.0
		if t.quant {
			f = g.Floor
			if t.big {
				f = g.FloorK
			}
		}
		l += g.Gain(t.class, t.layer, nLayer) * (t.err + f)
	}
	return l
}

// RowFit is a calibration row with its prediction.
type RowFit struct {
	KLDRow
	Predicted float64
}

// Calibration is the result of Calibrate.
type Calibration struct {
	Gains Gains
	Rows  []RowFit
	// Discordant counts the pairs of rows the prediction orders otherwise
	// than the measurement; Resolved those among them whose measured
	// divergences differ by more than twice their combined standard error.
	Discordant, Resolved, Pairs int
	// RMSLog is the root mean square of log(predicted / measured).
	RMSLog float64
	// Warnings say what makes the result doubtful (too few mixes).
	Warnings []string
}

// calibrate fits the gains to measured divergences: least squares on
// log(predicted/measured), each row weighted by its relative standard
// error plus 3 % for what the model cannot express, over the log of every
// class gain that some row's tensors use, the depth slope
// (First = e^s, Last = e^-s) and the floor. Gains of classes no row
// quantizes keep their value in start.
func calibrate(m model, hasIm bool, rows []KLDRow, errs errorTable, start Gains) (*Calibration, error) {
	nLayer := m.params.NLayer
	terms := make([][]mixTerm, len(rows))
	used := [numClasses]bool{}
	for r, row := range rows {
		ts, need, err := mixTerms(m, hasIm, row, errs)
		if err != nil {
			return nil, err
		}
		if len(need) > 0 {
			return nil, fmt.Errorf("fit: mix %s: %d tensors lack measurements", row.Mix, len(need))
		}
		terms[r] = ts
		for _, t := range ts {
			if t.quant {
				used[t.class] = true
			}
		}
	}
	var classes []Class
	for c := Class(0); c < numClasses; c++ {
		if used[c] {
			classes = append(classes, c)
		}
	}
	// Parameters: log gains of the used classes, the slope, log floor.
	p := make([]float64, len(classes)+4)
	for i, c := range classes {
		p[i] = math.Log(math.Max(start.Class[c], 1e-9))
	}
	p[len(classes)] = 0.5 * math.Log(start.First/start.Last)
	p[len(classes)+1] = math.Log(math.Max(start.Floor, 1e-9))
	p[len(classes)+2] = math.Log(math.Max(start.FloorK, 1e-9))
	p[len(classes)+3] = math.Log(math.Max(start.Saturation, 1e-9))
	var warnings []string
	seen := map[string]int{}
	for r, row := range rows {
		if first, dup := seen[row.Mix]; dup {
			warnings = append(warnings, fmt.Sprintf("mix %s is measured twice (rows %d and %d: KL divergence %g and %g): both are fitted", row.Mix, first+1, r+1, rows[first].KLD, row.KLD))
			continue
		}
		seen[row.Mix] = r
	}
	if len(rows) < len(p) {
		warnings = append(warnings, fmt.Sprintf("%d measured mix(es) for %d parameters (%d classes of tensors, the depth slope, two floors and the saturation): the table does not determine the gains; measure at least %d mixes",
			len(rows), len(p), len(classes), len(p)))
	}
	// exp of a bounded log: a parameter the rows hardly constrain may run
	// off, but never to an infinite or zero gain that a gains file cannot
	// hold.
	exp := func(v float64) float64 { return math.Exp(max(-maxLogGain, min(v, maxLogGain))) }
	gainsOf := func(p []float64) Gains {
		g := start
		for i, c := range classes {
			g.Class[c] = exp(p[i])
		}
		s := p[len(classes)]
		g.First, g.Last = exp(s), exp(-s)
		g.Floor = exp(p[len(classes)+1])
		g.FloorK = exp(p[len(classes)+2])
		g.Saturation = exp(p[len(classes)+3])
		return g
	}
	sigma := make([]float64, len(rows))
	for r, row := range rows {
		sigma[r] = math.Hypot(row.Err/row.KLD, 0.03)
	}
	// The attention classes are pulled towards their geometric mean (a
	// factor e^priorWidth apart costs as much as one row off by its sigma):
	// few mixes tell them apart, and a gain near zero the data does not
	// demand would let the optimiser strip that class.
	var attn []int
	for i, c := range classes {
		if c == ClassAttn || c == ClassAttnKV || c == ClassAttnOut {
			attn = append(attn, i)
		}
	}
	resid := func(p, out []float64) {
		g := gainsOf(p)
		for r := range rows {
			pred := g.KLD(predict(terms[r], &g, nLayer))
			out[r] = math.Log(math.Max(pred, 1e-300)/rows[r].KLD) / sigma[r]
		}
		mean := 0.0
		for _, i := range attn {
			mean += p[i] / float64(len(attn))
		}
		for k, i := range attn {
			out[len(rows)+k] = (p[i] - mean) / priorWidth
		}
	}
	// Least squares from the start gains and from a few flat starts; the
	// best wins (the problem has local minima where one attention class
	// takes all the blame).
	best, bestCost := p, math.Inf(1)
	nres := len(rows) + len(attn)
	out := make([]float64, nres)
	for _, scale := range []float64{0, 0.01, 0.1, 1} {
		q := append([]float64(nil), p...)
		if scale > 0 {
			for i := range classes {
				q[i] = math.Log(scale)
			}
			q[len(classes)] = 0
			q[len(classes)+1] = math.Log(1e-4)
			q[len(classes)+2] = math.Log(1e-4)
			q[len(classes)+3] = 0
		}
		q = levenberg(resid, q, nres)
		resid(q, out)
		c := 0.0
		for _, v := range out {
			c += v * v
		}
		if c < bestCost {
			best, bestCost = q, c
		}
	}
	p = best
	cal := &Calibration{Gains: gainsOf(p), Warnings: warnings}
	var ss float64
	for r, row := range rows {
		pred := cal.Gains.KLD(predict(terms[r], &cal.Gains, nLayer))
		cal.Rows = append(cal.Rows, RowFit{KLDRow: row, Predicted: pred})
		d := math.Log(pred / row.KLD)
		ss += d * d
	}
	cal.RMSLog = math.Sqrt(ss / float64(len(rows)))
	cal.Discordant, cal.Resolved, cal.Pairs = rankAgreement(cal.Rows)
	return cal, nil
}

// priorWidth is the log-space width of the prior on the attention gains.
const priorWidth = 1.5

// maxLogGain bounds the log of each fitted gain: e^±40 (about 2e17) is far
// beyond any gain a real table gives, and finite.
const maxLogGain = 40

// ErrOtherModel: a KLD table's file sizes are not this model's, so its
// divergences were measured on another model.
var ErrOtherModel = errors.New("fit: the KLD table was measured on another model")

// checkRowBytes compares the file size a row records with this model's
// plan of the same mix: the divergences of another model (or of another
// shape) would calibrate nonsense. The plan counts tensor data only, and a
// table's sizes also hold the header: the input's (header, the size of
// this model's header and metadata) and the keys quantize adds, for which
// 64 KiB or 1 % of the file are left.
func checkRowBytes(m model, hasIm bool, header int64, row KLDRow) error {
	if row.Bytes <= 0 {
		return nil
	}
	plan, err := m.selectAll(row.FileType, row.RuleSet, hasIm)
	if err != nil {
		return fmt.Errorf("fit: mix %s: %w", row.Mix, err)
	}
	var data int64
	for _, c := range plan.Choices {
		n, err := c.Type.TensorSize(c.Shape)
		if err != nil {
			return fmt.Errorf("fit: mix %s: %s: %w", row.Mix, c.Name, err)
		}
		data += n
	}
	if d := row.Bytes - data; d < 0 || d > header+max(64<<10, row.Bytes/100) {
		return fmt.Errorf("%w: mix %s is %d bytes in the table, %d bytes of tensor data in this model's plan", ErrOtherModel, row.Mix, row.Bytes, data)
	}
	return nil
}

// rankAgreement compares the orders of predicted and measured divergence.
func rankAgreement(rows []RowFit) (discordant, resolved, pairs int) {
	for i := range rows {
		for j := i + 1; j < len(rows); j++ {
			pairs++
			a, b := rows[i], rows[j]
			if (a.KLD-b.KLD)*(a.Predicted-b.Predicted) < 0 {
				discordant++
				if math.Abs(a.KLD-b.KLD) > 2*math.Hypot(a.Err, b.Err) {
					resolved++
				}
			}
		}
	}
	return
}

// levenberg minimises the sum of squares of resid(p) (n residuals) by the
// Levenberg-Marquardt method with a forward-difference Jacobian. The
// problems here are tiny (a dozen parameters), so plain Gaussian elimination
// solves each step.
func levenberg(resid func(p, out []float64), p []float64, n int) []float64 {
	k := len(p)
	r := make([]float64, n)
	rt := make([]float64, n)
	J := make([][]float64, n)
	for i := range J {
		J[i] = make([]float64, k)
	}
	cost := func(r []float64) float64 {
		s := 0.0
		for _, v := range r {
			s += v * v
		}
		return s
	}
	resid(p, r)
	c := cost(r)
	lambda := 1e-3
	q := make([]float64, k)
	for iter := 0; iter < 500; iter++ {
		for j := 0; j < k; j++ {
			h := 1e-6 * math.Max(1, math.Abs(p[j]))
			copy(q, p)
			q[j] += h
			resid(q, rt)
			for i := 0; i < n; i++ {
				J[i][j] = (rt[i] - r[i]) / h
			}
		}
		A := make([][]float64, k)
		b := make([]float64, k)
		for a := 0; a < k; a++ {
			A[a] = make([]float64, k)
			for bb := 0; bb < k; bb++ {
				for i := 0; i < n; i++ {
					A[a][bb] += J[i][a] * J[i][bb]
				}
			}
			for i := 0; i < n; i++ {
				b[a] -= J[i][a] * r[i]
			}
		}
		improved := false
		for try := 0; try < 30; try++ {
			M := make([][]float64, k)
			for a := range M {
				M[a] = append([]float64(nil), A[a]...)
				M[a][a] += lambda * (A[a][a] + 1e-12)
			}
			d, ok := solveLinear(M, append([]float64(nil), b...))
			if !ok {
				lambda *= 10
				continue
			}
			for j := range q {
				q[j] = p[j] + d[j]
			}
			resid(q, rt)
			if ct := cost(rt); ct < c {
				if c-ct < 1e-12*c {
					copy(p, q)
					return p
				}
				copy(p, q)
				copy(r, rt)
				c = ct
				lambda = math.Max(lambda/10, 1e-12)
				improved = true
				break
			}
			lambda *= 10
		}
		if !improved {
			break
		}
	}
	return p
}

// solveLinear solves M x = b by Gaussian elimination with partial pivoting.
func solveLinear(M [][]float64, b []float64) ([]float64, bool) {
	n := len(b)
	for c := 0; c < n; c++ {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(M[r][c]) > math.Abs(M[piv][c]) {
				piv = r
			}
		}
		if math.Abs(M[piv][c]) < 1e-300 {
			return nil, false
		}
		M[c], M[piv] = M[piv], M[c]
		b[c], b[piv] = b[piv], b[c]
		for r := c + 1; r < n; r++ {
			f := M[r][c] / M[c][c]
			for cc := c; cc < n; cc++ {
				M[r][cc] -= f * M[c][cc]
			}
			b[r] -= f * b[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for cc := r + 1; cc < n; cc++ {
			s -= M[r][cc] * x[cc]
		}
		x[r] = s / M[r][r]
	}
	return x, true
}

// Calibrate fits gains to the measured divergences of rows, measuring what
// the rows' mixes need on in with the importance matrix im (which the
// measured quants were made with). start gives the gains of classes no row
// quantizes, and the first guess.
func Calibrate(in *gguf.Model, im *imatrix.Matrix, rows []KLDRow, opts MeasureOptions, start Gains) (*Calibration, MeasureReport, error) {
	m, err := describe(in)
	if err != nil {
		return nil, MeasureReport{}, err
	}
	hasIm := im != nil && len(im.Entries) > 0
	errs := make(errorTable, len(in.Tensors))
	for i := range errs {
		errs[i] = map[formats.Type]float64{}
	}
	infos := make([]gguf.TensorInfo, len(in.Tensors))
	for i, t := range in.Tensors {
		infos[i] = t.TensorInfo
	}
	header, err := gguf.HeaderSize(in.Metadata, infos)
	if err != nil {
		return nil, MeasureReport{}, err
	}
	need := map[int][]formats.Type{}
	for _, row := range rows {
		if err := checkRowBytes(m, hasIm, header, row); err != nil {
			return nil, MeasureReport{}, err
		}
		_, nd, err := mixTerms(m, hasIm, row, errs)
		if err != nil {
			return nil, MeasureReport{}, err
		}
		for i, ts := range nd {
			for _, t := range ts {
				if !slicesContains(need[i], t) {
					need[i] = append(need[i], t)
				}
			}
		}
	}
	var reqs []Request
	for i := range in.Tensors {
		if len(need[i]) > 0 {
			reqs = append(reqs, Request{Tensor: i, Types: need[i]})
		}
	}
	res, rep, err := Measure(in, im, reqs, opts, true)
	if err != nil {
		return nil, rep, err
	}
	for i, ms := range res {
		for t, mm := range ms {
			errs[i][t] = mm.Err()
		}
	}
	cal, err := calibrate(m, hasIm, rows, errs, start)
	return cal, rep, err
}
