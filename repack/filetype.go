package repack

import (
	"github.com/gquant/gquant/formats"
	"github.com/gquant/gquant/recipes"
)

// FileTypeChange is what happens to general.file_type.
type FileTypeChange struct {
	// From is the input's general.file_type, or, when the key is absent,
	// the file type the reference's loader guesses from the most common
	// tensor type (with recipes.FileTypeGuessed set, as the reference
	// carries it).
	From recipes.FileType
	// To is the value written.
	To recipes.FileType
	// Present reports whether the input had the key.
	Present bool
	// Write reports whether the output gets the key (always when
	// repacking, as the reference sets it; on undo only when the input had it).
	Write bool
}

// IsRepackedFileType reports whether f is one of the reference's
// row-interleaved file types (Q4_0_R8 .. Q8_K_R8 by value, the range the
// reference's quantizer tests to decide that a model "is repacked").
func IsRepackedFileType(f recipes.FileType) bool {
	return f >= recipes.FileTypeQ4_0_R8 && f <= recipes.FileTypeQ8_K_R8
}

// RepackedFileType is the general.file_type a repack writes for an input of
// file type f: the reference's repacked_ftype (recipes.RepackedFileType),
// f itself when the table has no entry (guessed types included).
func RepackedFileType(f recipes.FileType) recipes.FileType { return recipes.RepackedFileType(f) }

// UndoFileType is the general.file_type --undo writes for an input of file
// type f: the file type RepackedFileType maps to f. Where several do
// (Q3_K_S/M/L -> Q3_K_R4, Q4_K_S/M -> Q4_K_R4, Q5_K_S/M -> Q5_K_R4) it is the
// one the reference's loader guesses for a file mostly of that base type:
// Q3_K_M, Q4_K_M and Q5_K_M. Any other f comes back unchanged.
func UndoFileType(f recipes.FileType) recipes.FileType {
	if b, ok := undoFileTypes[f]; ok {
		return b
	}
	return f
}

// undoFileTypes inverts recipes.RepackedFileType, ties broken by the loader's guess.
var undoFileTypes = func() map[recipes.FileType]recipes.FileType {
	candidates := map[recipes.FileType][]recipes.FileType{}
	for _, f := range recipes.FileTypes() {
		if r := recipes.RepackedFileType(f); r != f {
			candidates[r] = append(candidates[r], f)
		}
	}
	out := map[recipes.FileType]recipes.FileType{}
	for r, bases := range candidates {
		out[r] = bases[0]
		if len(bases) == 1 {
			continue
		}
		// Tied: take the base file type the loader would guess for a model
		// whose tensors are mostly the interleaved type's base.
		deflt, err := r.DefaultType()
		if err != nil {
			continue
		}
		if guess, ok := guessedFileTypes[deflt.Base()]; ok {
			for _, b := range bases {
				if b == guess {
					out[r] = b
				}
			}
		}
	}
	// The ARM repacks of q4_0 come from llama-quantize's file types, not
	// from a repack, but they too hold q4_0 rows rearranged: --undo turns
	// them into Q4_0 files, which every build of llama.cpp reads.
	for _, r := range []recipes.FileType{recipes.FileTypeQ4_0_4_4, recipes.FileTypeQ4_0_4_8, recipes.FileTypeQ4_0_8_8} {
		out[r] = recipes.FileTypeQ4_0
	}
	return out
}()

// guessedFileTypes is the reference loader's switch from a model's most
// common tensor type to the file type it assumes when general.file_type is
// absent. Types not listed make it guess ALL_F32.
var guessedFileTypes = map[formats.Type]recipes.FileType{
	formats.F32: recipes.FileTypeAllF32, formats.F16: recipes.FileTypeF16,
	formats.BF16: recipes.FileTypeBF16, formats.BF16_R16: recipes.FileTypeBF16_R16,
	formats.Q4_0: recipes.FileTypeQ4_0, formats.Q4_1: recipes.FileTypeQ4_1,
	formats.Q5_0: recipes.FileTypeQ5_0, formats.Q5_1: recipes.FileTypeQ5_1,
	formats.Q6_0: recipes.FileTypeQ6_0, formats.Q8_0: recipes.FileTypeQ8_0,
	formats.Q8_KV: recipes.FileTypeQ8_KV, formats.Q2_K: recipes.FileTypeQ2_K,
	formats.Q3_K: recipes.FileTypeQ3_K_M, formats.Q3_K_R4: recipes.FileTypeQ3_K_R4,
	formats.Q4_K: recipes.FileTypeQ4_K_M, formats.Q4_K_R4: recipes.FileTypeQ4_K_R4,
	formats.Q5_K: recipes.FileTypeQ5_K_M, formats.Q5_K_R4: recipes.FileTypeQ5_K_R4,
	formats.Q6_K: recipes.FileTypeQ6_K, formats.Q6_K_R4: recipes.FileTypeQ6_K_R4,
	formats.Q8_K_R8: recipes.FileTypeQ8_K_R8, formats.Q8_KV_R8: recipes.FileTypeQ8_KV_R8,
	formats.IQ2_XXS: recipes.FileTypeIQ2_XXS, formats.IQ2_XXS_R4: recipes.FileTypeIQ2_XXS_R4,
	formats.IQ2_XS: recipes.FileTypeIQ2_XS, formats.IQ2_XS_R4: recipes.FileTypeIQ2_XS_R4,
	formats.IQ2_KS: recipes.FileTypeIQ2_KS, formats.IQ2_S: recipes.FileTypeIQ2_M,
	formats.IQ2_S_R4: recipes.FileTypeIQ2_M_R4, formats.IQ3_XXS: recipes.FileTypeIQ3_XXS,
	formats.IQ3_XXS_R4: recipes.FileTypeIQ3_XXS_R4, formats.IQ1_KT: recipes.FileTypeIQ1_KT,
	formats.IQ2_KT: recipes.FileTypeIQ2_KT, formats.IQ3_KT: recipes.FileTypeIQ3_KT,
	formats.IQ4_KT: recipes.FileTypeIQ4_KT, formats.IQ1_S: recipes.FileTypeIQ1_S,
	formats.IQ1_S_R4: recipes.FileTypeIQ1_S_R4, formats.IQ1_M_R4: recipes.FileTypeIQ1_M_R4,
	formats.IQ1_M: recipes.FileTypeIQ1_M, formats.IQ1_BN: recipes.FileTypeIQ1_BN,
	formats.IQ2_BN: recipes.FileTypeIQ2_BN, formats.IQ2_BN_R4: recipes.FileTypeIQ2_BN_R4,
	formats.IQ4_NL: recipes.FileTypeIQ4_NL, formats.IQ4_NL_R4: recipes.FileTypeIQ4_NL_R4,
	formats.IQ4_XS_R8: recipes.FileTypeIQ4_XS_R8, formats.Q4_0_R8: recipes.FileTypeQ4_0_R8,
	formats.Q5_0_R4: recipes.FileTypeQ5_0_R4, formats.Q6_0_R4: recipes.FileTypeQ6_0_R4,
	formats.Q8_0_R8: recipes.FileTypeQ8_0_R8, formats.MXFP4: recipes.FileTypeMXFP4,
	formats.IQ4_XS: recipes.FileTypeIQ4_XS, formats.IQ4_KS: recipes.FileTypeIQ4_KS,
	formats.IQ4_KS_R4: recipes.FileTypeIQ4_KS_R4, formats.IQ5_KS_R4: recipes.FileTypeIQ5_KS_R4,
	formats.IQ4_KSS: recipes.FileTypeIQ4_KSS, formats.IQ5_KS: recipes.FileTypeIQ5_KS,
	formats.IQ2_K: recipes.FileTypeIQ2_K, formats.IQ2_K_R4: recipes.FileTypeIQ2_K_R4,
	formats.IQ3_KS: recipes.FileTypeIQ3_KS, formats.IQ2_KL: recipes.FileTypeIQ2_KL,
	formats.IQ3_K: recipes.FileTypeIQ3_K, formats.IQ3_K_R4: recipes.FileTypeIQ3_K_R4,
	formats.IQ4_K: recipes.FileTypeIQ4_K, formats.IQ4_K_R4: recipes.FileTypeIQ4_K_R4,
	formats.IQ5_K: recipes.FileTypeIQ5_K, formats.IQ5_K_R4: recipes.FileTypeIQ5_K_R4,
	formats.IQ6_K: recipes.FileTypeIQ6_K, formats.IQ3_S: recipes.FileTypeIQ3_S,
	formats.IQ3_S_R4: recipes.FileTypeIQ3_S_R4, formats.Q4_0_4X4: recipes.FileTypeQ4_0_4_4,
	formats.Q4_0_4X8: recipes.FileTypeQ4_0_4_8, formats.Q4_0_8X8: recipes.FileTypeQ4_0_8_8,
}

// GuessFileType is the file type the reference's loader assumes for a model
// without general.file_type: the one for the most common tensor type (the
// first type to reach the highest count, in tensor order), with
// recipes.FileTypeGuessed set.
func GuessFileType(types []formats.Type) recipes.FileType {
	count := map[formats.Type]int{}
	best, bestCount := formats.F32, 0
	for _, t := range types {
		count[t]++
		if count[t] > bestCount {
			best, bestCount = t, count[t]
		}
	}
	f, ok := guessedFileTypes[best]
	if !ok {
		f = recipes.FileTypeAllF32
	}
	return f | recipes.FileTypeGuessed
}
