// Package mediumtest holds the whole-file test of the medium model
// (../shared/models/medium, README there): it generates the bf16 model,
// quantizes it as the reference's five recorded runs did, and compares every
// tensor and metadata value with the reference's manifests.
//
// The runs take minutes, so they are behind the build tag "medium":
//
//	go test -tags medium -timeout 60m ./internal/mediumtest
//
// GQUANT_MEDIUM_CACHE names a folder where the generated model is kept (and
// reused while its md5 is right); without it the model is made in a temporary
// folder and removed afterwards. The test writes a new model under a
// temporary name and renames it; a cached model rewritten in place while the
// test reads it fails the run with an EOF. The manifest reader and
// comparison, and the table of tensors known to differ, are checked without
// the tag.
package mediumtest
