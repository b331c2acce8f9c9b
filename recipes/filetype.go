// Package recipes decides, tensor by tensor, which ggml type a quantized
// file gets, exactly as ik_llama.cpp's llama-quantize decides it: the file
// type's built-in mixture, the per-option overrides (--attn-v-type, ...), the
// --custom-q rules (regex=type, first match wins), the fallbacks for rows that
// do not fit a type's block, and --repack. It also parses rules from
// --custom-q strings and from recipe files, and analyses a rule set against a
// model's tensor names for a dry-run planner.
//
// The package reads nothing but recipe files: callers hand it tensor names,
// shapes, types and the few model hyper-parameters the choice depends on.
package recipes

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/internal/text"
)

// FileType is a llama_ftype: the value stored in general.file_type and the
// "type" argument of llama-quantize. It prints by its llama-quantize name.
type FileType uint32

// The llama_ftype values the reference's quantize knows (include/llama.h).
const (
	FileTypeAllF32    FileType = 0
	FileTypeF16       FileType = 1
	FileTypeQ4_0      FileType = 2
	FileTypeQ4_1      FileType = 3
	FileTypeQ8_0      FileType = 7
	FileTypeQ5_0      FileType = 8
	FileTypeQ5_1      FileType = 9
	FileTypeQ2_K      FileType = 10
	FileTypeQ3_K_S    FileType = 11
	FileTypeQ3_K_M    FileType = 12
	FileTypeQ3_K_L    FileType = 13
	FileTypeQ4_K_S    FileType = 14
	FileTypeQ4_K_M    FileType = 15
	FileTypeQ5_K_S    FileType = 16
	FileTypeQ5_K_M    FileType = 17
	FileTypeQ6_K      FileType = 18
	FileTypeIQ2_XXS   FileType = 19
	FileTypeIQ2_XS    FileType = 20
	FileTypeQ2_K_S    FileType = 21
	FileTypeIQ3_XS    FileType = 22
	FileTypeIQ3_XXS   FileType = 23
	FileTypeIQ1_S     FileType = 24
	FileTypeIQ4_NL    FileType = 25
	FileTypeIQ3_S     FileType = 26
	FileTypeIQ3_M     FileType = 27
	FileTypeIQ2_S     FileType = 28
	FileTypeIQ2_M     FileType = 29
	FileTypeIQ4_XS    FileType = 30
	FileTypeIQ1_M     FileType = 31
	FileTypeBF16      FileType = 32
	FileTypeQ4_0_4_4  FileType = 33
	FileTypeQ4_0_4_8  FileType = 34
	FileTypeQ4_0_8_8  FileType = 35
	FileTypeMXFP4     FileType = 38
	FileTypeQ1_0_G128 FileType = 41
	FileTypeQ6_0      FileType = 135
	FileTypeIQ1_BN    FileType = 136
	FileTypeIQ2_BN    FileType = 137
	FileTypeIQ2_K     FileType = 138
	FileTypeIQ3_K     FileType = 139
	FileTypeIQ4_K     FileType = 140
	FileTypeIQ5_K     FileType = 141
	FileTypeIQ6_K     FileType = 142
	FileTypeIQ4_KS    FileType = 145
	FileTypeIQ3_KL    FileType = 146
	FileTypeIQ2_KS    FileType = 147
	FileTypeIQ4_KSS   FileType = 148
	FileTypeQ8_KV     FileType = 149
	FileTypeIQ5_KS    FileType = 150
	FileTypeIQ2_KT    FileType = 151
	FileTypeIQ3_KT    FileType = 152
	FileTypeIQ4_KT    FileType = 153
	FileTypeIQ3_KS    FileType = 154
	FileTypeIQ2_KL    FileType = 155
	FileTypeIQ1_KT    FileType = 156

	FileTypeQ4_0_R8    FileType = 202
	FileTypeQ8_0_R8    FileType = 207
	FileTypeQ5_0_R4    FileType = 208
	FileTypeQ2_K_R4    FileType = 210
	FileTypeQ3_K_R4    FileType = 211
	FileTypeQ4_K_R4    FileType = 214
	FileTypeQ5_K_R4    FileType = 216
	FileTypeQ6_K_R4    FileType = 218
	FileTypeIQ2_XXS_R4 FileType = 219
	FileTypeIQ2_XS_R4  FileType = 220
	FileTypeIQ3_XXS_R4 FileType = 223
	FileTypeIQ1_S_R4   FileType = 224
	FileTypeIQ4_NL_R4  FileType = 225
	FileTypeIQ3_S_R4   FileType = 226
	FileTypeIQ2_M_R4   FileType = 229
	FileTypeIQ4_XS_R8  FileType = 230
	FileTypeIQ1_M_R4   FileType = 231
	FileTypeBF16_R16   FileType = 232
	FileTypeQ6_0_R4    FileType = 335
	FileTypeIQ2_BN_R4  FileType = 337
	FileTypeIQ2_K_R4   FileType = 338
	FileTypeIQ3_K_R4   FileType = 339
	FileTypeIQ4_K_R4   FileType = 340
	FileTypeIQ5_K_R4   FileType = 341
	FileTypeIQ4_KS_R4  FileType = 345
	FileTypeIQ5_KS_R4  FileType = 350
	FileTypeMXFP4_R8   FileType = 351
	FileTypeQ8_KV_R8   FileType = 398
	FileTypeQ8_K_R8    FileType = 399

	// FileTypeGuessed is or-ed into a file type the loader guessed from the
	// tensor types because general.file_type was absent.
	FileTypeGuessed FileType = 1024
)

// fileTypeInfo is one file type: its canonical llama-quantize name and the
// type every tensor starts from before the mixture rules adjust it.
type fileTypeInfo struct {
	ft      FileType
	name    string
	deflt   formats.Type
	aliases []string // further llama-quantize names for the same value
}

// fileTypeTable follows llama_model_quantize_internal's default-type switch;
// names are examples/quantize's QUANT_OPTIONS. Q1_0_G128 has a default type in
// the reference but no QUANT_OPTIONS entry.
var fileTypeTable = []fileTypeInfo{
	{FileTypeAllF32, "F32", formats.F32, nil},
	{FileTypeF16, "F16", formats.F16, nil},
	{FileTypeBF16, "BF16", formats.BF16, nil},
	{FileTypeBF16_R16, "BF16_R16", formats.BF16_R16, nil},
	{FileTypeQ4_0, "Q4_0", formats.Q4_0, nil},
	{FileTypeQ4_1, "Q4_1", formats.Q4_1, nil},
	{FileTypeQ5_0, "Q5_0", formats.Q5_0, nil},
	{FileTypeQ5_1, "Q5_1", formats.Q5_1, nil},
	{FileTypeQ6_0, "Q6_0", formats.Q6_0, nil},
	{FileTypeQ8_0, "Q8_0", formats.Q8_0, nil},
	{FileTypeQ8_KV, "Q8_KV", formats.Q8_KV, nil},
	{FileTypeMXFP4, "MXFP4", formats.MXFP4, nil},
	{FileTypeMXFP4_R8, "MXFP4_R8", formats.MXFP4_R8, nil},
	{FileTypeQ1_0_G128, "Q1_0_G128", formats.Q1_0_G128, nil},
	{FileTypeQ2_K, "Q2_K", formats.Q2_K, nil},
	{FileTypeQ2_K_S, "Q2_K_S", formats.Q2_K, nil},
	{FileTypeQ2_K_R4, "Q2_K_R4", formats.Q2_K_R4, nil},
	{FileTypeIQ3_XS, "IQ3_XS", formats.IQ3_S, nil},
	{FileTypeQ3_K_S, "Q3_K_S", formats.Q3_K, nil},
	{FileTypeQ3_K_M, "Q3_K_M", formats.Q3_K, []string{"Q3_K"}},
	{FileTypeQ3_K_L, "Q3_K_L", formats.Q3_K, nil},
	{FileTypeQ3_K_R4, "Q3_K_R4", formats.Q3_K_R4, nil},
	{FileTypeQ4_K_S, "Q4_K_S", formats.Q4_K, nil},
	{FileTypeQ4_K_M, "Q4_K_M", formats.Q4_K, []string{"Q4_K"}},
	{FileTypeQ4_K_R4, "Q4_K_R4", formats.Q4_K_R4, nil},
	{FileTypeQ5_K_S, "Q5_K_S", formats.Q5_K, nil},
	{FileTypeQ5_K_M, "Q5_K_M", formats.Q5_K, []string{"Q5_K"}},
	{FileTypeQ5_K_R4, "Q5_K_R4", formats.Q5_K_R4, nil},
	{FileTypeQ6_K, "Q6_K", formats.Q6_K, nil},
	{FileTypeQ6_K_R4, "Q6_K_R4", formats.Q6_K_R4, nil},
	{FileTypeQ8_K_R8, "Q8_K_R8", formats.Q8_K_R8, nil},
	{FileTypeQ8_KV_R8, "Q8_KV_R8", formats.Q8_KV_R8, nil},
	{FileTypeIQ2_XXS, "IQ2_XXS", formats.IQ2_XXS, nil},
	{FileTypeIQ2_XXS_R4, "IQ2_XXS_R4", formats.IQ2_XXS_R4, nil},
	{FileTypeIQ2_XS, "IQ2_XS", formats.IQ2_XS, nil},
	{FileTypeIQ2_XS_R4, "IQ2_XS_R4", formats.IQ2_XS_R4, nil},
	{FileTypeIQ2_KS, "IQ2_KS", formats.IQ2_KS, nil},
	{FileTypeIQ1_KT, "IQ1_KT", formats.IQ1_KT, nil},
	{FileTypeIQ2_KT, "IQ2_KT", formats.IQ2_KT, nil},
	{FileTypeIQ2_S, "IQ2_S", formats.IQ2_XS, nil},
	{FileTypeIQ2_M, "IQ2_M", formats.IQ2_S, nil},
	{FileTypeIQ2_M_R4, "IQ2_M_R4", formats.IQ2_S_R4, nil},
	{FileTypeIQ3_XXS, "IQ3_XXS", formats.IQ3_XXS, nil},
	{FileTypeIQ3_KT, "IQ3_KT", formats.IQ3_KT, nil},
	{FileTypeIQ4_KT, "IQ4_KT", formats.IQ4_KT, nil},
	{FileTypeIQ3_XXS_R4, "IQ3_XXS_R4", formats.IQ3_XXS_R4, nil},
	{FileTypeIQ1_S, "IQ1_S", formats.IQ1_S, nil},
	{FileTypeIQ1_S_R4, "IQ1_S_R4", formats.IQ1_S_R4, nil},
	{FileTypeIQ1_M_R4, "IQ1_M_R4", formats.IQ1_M_R4, nil},
	{FileTypeIQ1_M, "IQ1_M", formats.IQ1_M, nil},
	{FileTypeIQ1_BN, "IQ1_BN", formats.IQ1_BN, nil},
	{FileTypeIQ2_BN, "IQ2_BN", formats.IQ2_BN, nil},
	{FileTypeIQ2_BN_R4, "IQ2_BN_R4", formats.IQ2_BN_R4, nil},
	{FileTypeIQ4_NL, "IQ4_NL", formats.IQ4_NL, nil},
	{FileTypeIQ4_NL_R4, "IQ4_NL_R4", formats.IQ4_NL_R4, nil},
	{FileTypeIQ4_XS_R8, "IQ4_XS_R8", formats.IQ4_XS_R8, nil},
	{FileTypeQ4_0_R8, "Q4_0_R8", formats.Q4_0_R8, nil},
	{FileTypeQ5_0_R4, "Q5_0_R4", formats.Q5_0_R4, nil},
	{FileTypeQ6_0_R4, "Q6_0_R4", formats.Q6_0_R4, nil},
	{FileTypeQ8_0_R8, "Q8_0_R8", formats.Q8_0_R8, nil},
	{FileTypeIQ4_XS, "IQ4_XS", formats.IQ4_XS, nil},
	{FileTypeIQ4_KS, "IQ4_KS", formats.IQ4_KS, nil},
	{FileTypeIQ4_KS_R4, "IQ4_KS_R4", formats.IQ4_KS_R4, nil},
	{FileTypeIQ5_KS_R4, "IQ5_KS_R4", formats.IQ5_KS_R4, nil},
	{FileTypeIQ4_KSS, "IQ4_KSS", formats.IQ4_KSS, nil},
	{FileTypeIQ5_KS, "IQ5_KS", formats.IQ5_KS, nil},
	{FileTypeIQ2_K, "IQ2_K", formats.IQ2_K, nil},
	{FileTypeIQ2_K_R4, "IQ2_K_R4", formats.IQ2_K_R4, nil},
	{FileTypeIQ3_KS, "IQ3_KS", formats.IQ3_KS, nil},
	{FileTypeIQ2_KL, "IQ2_KL", formats.IQ2_KL, nil},
	{FileTypeIQ3_K, "IQ3_K", formats.IQ3_K, nil},
	{FileTypeIQ3_K_R4, "IQ3_K_R4", formats.IQ3_K_R4, nil},
	{FileTypeIQ3_KL, "IQ3_KL", formats.IQ3_K, nil},
	{FileTypeIQ4_K, "IQ4_K", formats.IQ4_K, nil},
	{FileTypeIQ4_K_R4, "IQ4_K_R4", formats.IQ4_K_R4, nil},
	{FileTypeIQ5_K, "IQ5_K", formats.IQ5_K, nil},
	{FileTypeIQ5_K_R4, "IQ5_K_R4", formats.IQ5_K_R4, nil},
	{FileTypeIQ6_K, "IQ6_K", formats.IQ6_K, nil},
	{FileTypeIQ3_S, "IQ3_S", formats.IQ3_S, nil},
	{FileTypeIQ3_S_R4, "IQ3_S_R4", formats.IQ3_S_R4, nil},
	{FileTypeIQ3_M, "IQ3_M", formats.IQ3_S, nil},
	{FileTypeQ4_0_4_4, "Q4_0_4_4", formats.Q4_0_4X4, nil},
	{FileTypeQ4_0_4_8, "Q4_0_4_8", formats.Q4_0_4X8, nil},
	{FileTypeQ4_0_8_8, "Q4_0_8_8", formats.Q4_0_8X8, nil},
}

var (
	fileTypeByValue = map[FileType]*fileTypeInfo{}
	fileTypeByName  = map[string]*fileTypeInfo{} // upper-case names and aliases
)

func init() {
	for i := range fileTypeTable {
		e := &fileTypeTable[i]
		if fileTypeByValue[e.ft] != nil {
			panic("recipes: file type listed twice: " + e.name)
		}
		fileTypeByValue[e.ft] = e
		for _, n := range append([]string{e.name}, e.aliases...) {
			if fileTypeByName[n] != nil {
				panic("recipes: file type name listed twice: " + n)
			}
			fileTypeByName[n] = e
		}
	}
}

// ErrUnknownFileType is returned for file type names or numbers llama-quantize does not accept.
var ErrUnknownFileType = errors.New("recipes: unknown file type")

func (f FileType) String() string {
	if e := fileTypeByValue[f]; e != nil {
		return e.name
	}
	if f&FileTypeGuessed != 0 {
		return fmt.Sprintf("%s (guessed)", f&^FileTypeGuessed)
	}
	return fmt.Sprintf("ftype(%d)", uint32(f))
}

// Known reports whether llama-quantize can produce this file type.
func (f FileType) Known() bool { return fileTypeByValue[f] != nil }

// NotInReferenceCommandLine reports whether llama-quantize's command line
// cannot select f although its library writes it: Q1_0_G128 has a default
// type in llama_model_quantize_internal but no QUANT_OPTIONS entry, by name
// or number. gquant offers it anyway.
func (f FileType) NotInReferenceCommandLine() bool { return f == FileTypeQ1_0_G128 }

// DefaultType is the type each quantizable tensor starts from before the
// mixture rules adjust it (the reference's default_type).
func (f FileType) DefaultType() (formats.Type, error) {
	e := fileTypeByValue[f]
	if e == nil {
		return 0, fmt.Errorf("%w: invalid output file type %d", ErrUnknownFileType, uint32(f))
	}
	return e.deflt, nil
}

// FileTypes lists every file type llama-quantize can produce, in numeric order.
func FileTypes() []FileType {
	out := make([]FileType, 0, len(fileTypeTable))
	for _, e := range fileTypeTable {
		out = append(out, e.ft)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// FileTypeNames lists every name ParseFileType accepts (aliases and COPY
// included), in upper case.
func FileTypeNames() []string {
	out := []string{"COPY"}
	for n := range fileTypeByName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ParseFileType reads llama-quantize's type argument: a name in any case
// ("q4_k_m", "Q4_K" is Q4_K_M) or a number ("15"). copyOnly is true for COPY,
// which the reference maps to ALL_F32 with every tensor copied unchanged.
func ParseFileType(s string) (ft FileType, copyOnly bool, err error) {
	up := strings.ToUpper(s)
	if up == "COPY" {
		return FileTypeAllF32, true, nil
	}
	if e := fileTypeByName[up]; e != nil {
		return e.ft, false, nil
	}
	// The reference falls back to std::stoi, which skips leading white space
	// and reads the longest signed decimal prefix.
	if n, ok := stoi(up); ok && n >= 0 {
		if e := fileTypeByValue[FileType(n)]; e != nil {
			return e.ft, false, nil
		}
		return 0, false, fmt.Errorf("%w %q: no file type has number %d", ErrUnknownFileType, s, n)
	}
	if sug := text.Suggest(s, FileTypeNames(), 3); len(sug) > 0 {
		return 0, false, fmt.Errorf("%w %q (did you mean %s?)", ErrUnknownFileType, s, strings.Join(sug, ", "))
	}
	return 0, false, fmt.Errorf("%w %q", ErrUnknownFileType, s)
}

// FileTypeArgName is the name llama-quantize gives a type argument that
// ParseFileType accepts, in its log line and its default output name
// (ggml-model-NAME.gguf): the entry of its list the argument matched, so an
// alias stays an alias ("q4_k" is Q4_K), and a number is the first entry of
// that value, which is the alias where there is one (15 is Q4_K: each alias
// precedes its type's own entry in QUANT_OPTIONS). Other arguments are
// returned as they are.
func FileTypeArgName(arg string) string {
	up := strings.ToUpper(arg)
	if up == "COPY" || fileTypeByName[up] != nil {
		return up
	}
	if n, ok := stoi(up); ok && n >= 0 {
		if e := fileTypeByValue[FileType(n)]; e != nil {
			if len(e.aliases) > 0 {
				return e.aliases[0]
			}
			return e.name
		}
	}
	return arg
}

// stoi mimics std::stoi: optional leading white space, an optional sign, then
// at least one decimal digit; anything after the digits is ignored.
func stoi(s string) (int64, bool) {
	i := 0
	for i < len(s) && strings.ContainsRune(" \t\n\v\f\r", rune(s[i])) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var n int64
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int64(s[i]-'0')
		if n > 1<<31 {
			return 0, false // std::stoi throws out_of_range
		}
		i++
	}
	if i == start {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// RequiresImatrix reports whether llama-quantize refuses this file type
// outright when no importance matrix is given (and no --ignore-imatrix-rules).
func (f FileType) RequiresImatrix() bool {
	switch f {
	case FileTypeIQ2_XS, FileTypeIQ2_XXS, FileTypeIQ2_S, FileTypeIQ2_XXS_R4, FileTypeQ2_K_S,
		FileTypeIQ2_XS_R4, FileTypeIQ1_S, FileTypeIQ1_S_R4, FileTypeIQ1_M_R4, FileTypeIQ1_M:
		return true
	}
	return false
}

// repackedFileTypes is the reference's repacked_ftype table: the
// general.file_type written by --repack for an input of the key's file type.
var repackedFileTypes = map[FileType]FileType{
	FileTypeQ4_0: FileTypeQ4_0_R8, FileTypeQ8_0: FileTypeQ8_0_R8, FileTypeQ5_0: FileTypeQ5_0_R4,
	FileTypeQ2_K: FileTypeQ2_K_R4, FileTypeQ3_K_S: FileTypeQ3_K_R4, FileTypeQ3_K_M: FileTypeQ3_K_R4,
	FileTypeQ3_K_L: FileTypeQ3_K_R4, FileTypeQ4_K_S: FileTypeQ4_K_R4, FileTypeQ4_K_M: FileTypeQ4_K_R4,
	FileTypeQ5_K_S: FileTypeQ5_K_R4, FileTypeQ5_K_M: FileTypeQ5_K_R4, FileTypeQ6_K: FileTypeQ6_K_R4,
	FileTypeIQ2_XXS: FileTypeIQ2_XXS_R4, FileTypeIQ2_XS: FileTypeIQ2_XS_R4, FileTypeIQ3_XXS: FileTypeIQ3_XXS_R4,
	FileTypeIQ1_S: FileTypeIQ1_S_R4, FileTypeIQ4_NL: FileTypeIQ4_NL_R4, FileTypeIQ3_S: FileTypeIQ3_S_R4,
	FileTypeIQ2_M: FileTypeIQ2_M_R4, FileTypeIQ4_XS: FileTypeIQ4_XS_R8, FileTypeIQ1_M: FileTypeIQ1_M_R4,
	FileTypeQ6_0: FileTypeQ6_0_R4, FileTypeBF16: FileTypeBF16_R16, FileTypeIQ2_BN: FileTypeIQ2_BN_R4,
	FileTypeIQ2_K: FileTypeIQ2_K_R4, FileTypeIQ3_K: FileTypeIQ3_K_R4, FileTypeIQ4_K: FileTypeIQ4_K_R4,
	FileTypeIQ5_K: FileTypeIQ5_K_R4, FileTypeIQ4_KS: FileTypeIQ4_KS_R4, FileTypeIQ5_KS: FileTypeIQ5_KS_R4,
	FileTypeQ8_KV: FileTypeQ8_KV_R8,
}

// RepackedFileType is the general.file_type --repack writes for an input
// whose general.file_type is f (f itself when there is no repacked variant).
func RepackedFileType(f FileType) FileType {
	if r, ok := repackedFileTypes[f]; ok {
		return r
	}
	return f
}
