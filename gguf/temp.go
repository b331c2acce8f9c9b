package gguf

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Every file this project writes goes through a temporary file in the
// destination's directory, renamed into place when complete. The temporary
// name says which output and which process it belongs to:
//
//	.BASE.tmp-PID-RANDOM
//
// and the writing process holds an exclusive lock on it (flock, where the
// system has it) for as long as it writes. So after a crash or a kill -9,
// a later run on the same output can tell a stale temporary file (no lock,
// no such process) from one still being written (TempFiles).
//
// The process id alone does not say whether a file is this process's: in
// containers every gquant may run as process 1, each in its own PID
// namespace, on the same shared directory. So the PID-RANDOM part of a
// name is a token (NewTempToken) that this process records when it makes
// it, and a file is this process's when its token is one of those.

// tempMarker separates the output's name from the process id and the
// random part.
const tempMarker = ".tmp-"

// TempPrefix is the start of the name of every temporary file of a write
// to path, in path's directory: "." + base name + ".tmp-".
func TempPrefix(path string) string {
	return "." + filepath.Base(path) + tempMarker
}

// CreateTemp creates and locks a new temporary file for a write of path, in
// path's directory, created with mode 0666 so that the umask decides the
// final permissions (as for any file a program creates). The caller writes
// it, then renames it to path or removes it.
func CreateTemp(path string) (*os.File, error) {
	dir, prefix := filepath.Dir(path), TempPrefix(path)
	for try := 0; ; try++ {
		token := NewTempToken()
		name := filepath.Join(dir, prefix+token)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) {
			// Another process's (of the same id, in another PID
			// namespace) or an earlier one's: not this process's file.
			forgetTempToken(token)
			if try < 100 {
				continue
			}
		}
		if err != nil {
			return nil, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			os.Remove(name)
			return nil, err
		}
		// A stale-file sweep of another run may have taken the file between
		// its creation and the lock: then the name is no longer this file.
		if st, err := f.Stat(); err == nil {
			if now, err := os.Lstat(name); err == nil && os.SameFile(st, now) {
				return f, nil
			}
		}
		f.Close()
		if try >= 100 {
			return nil, fmt.Errorf("gguf: cannot keep a temporary file for %s", path)
		}
	}
}

// ownTokens holds the tokens of the temporary names this process made.
// It is package state because it is part of the process's identity, as
// its id is: every writer of the process, whatever package or goroutine
// made the name, must be told apart from other processes alike, and no
// caller could hand such a set around to each place that names or judges
// a temporary file.
var ownTokens struct {
	sync.Mutex
	set map[string]bool
}

// NewTempToken returns a new token for a temporary name, "PID-RANDOM"
// (TempPrefix(path)+token names a temporary file of path), and records it
// as this process's, so that TempFiles reports the files named with it as
// Own.
func NewTempToken() string {
	ownTokens.Lock()
	defer ownTokens.Unlock()
	if ownTokens.set == nil {
		ownTokens.set = map[string]bool{}
	}
	for {
		// Never one handed out already: forgetTempToken must not drop
		// a name of this process still in use.
		token := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(rand.Uint64()>>16, 36)
		if !ownTokens.set[token] {
			ownTokens.set[token] = true
			return token
		}
	}
}

// forgetTempToken drops a token whose name turned out to be taken already:
// the file of that name is not this process's.
func forgetTempToken(token string) {
	ownTokens.Lock()
	defer ownTokens.Unlock()
	delete(ownTokens.set, token)
}

// ownToken reports whether this process made token (NewTempToken).
func ownToken(token string) bool {
	ownTokens.Lock()
	defer ownTokens.Unlock()
	return ownTokens.set[token]
}

// TempFile is a temporary file of a write found by TempFiles.
type TempFile struct {
	Path string
	// PID is the process that made it (0 for the names of older versions,
	// which do not record it). Another process, in another PID namespace,
	// may have the same id as this one: Own tells this process's files.
	PID int
	// Own is true for a file this process named (NewTempToken); for a
	// progress record TEMP.progress, when it named TEMP.
	Own bool
	// Size is the file's size in bytes.
	Size int64
	// Live is true when the file is being written: it is this process's,
	// its lock is held or its process (another than this one) is running.
	// A progress record TEMP.progress is live while TEMP is: the record
	// itself is not locked. A file with this process's id that this
	// process did not name is told by its lock alone. A file of an older
	// version's name is always reported live, as nothing tells.
	Live bool
}

// TempFiles lists the temporary files of writes to path: this version's
// (.BASE.tmp-PID-RANDOM, and the ..BASE.tmp-PID-RANDOM.tmp-... of a staged
// shard) and older versions' (.BASE.tmp-RANDOM, .BASE.tmpRANDOM,
// .BASE.partial-RANDOM).
func TempFiles(path string) ([]TempFile, error) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	var out []TempFile
	for _, e := range entries {
		name := e.Name()
		pid, token, ours, legacy := parseTempName(name, base)
		if !ours && !legacy {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		tf := TempFile{Path: filepath.Join(dir, name), PID: pid, Size: info.Size(), Live: true}
		if ours {
			tf.Own = ownToken(token)
			// A progress record is not locked: its temporary file is.
			data := strings.TrimSuffix(tf.Path, ".progress")
			tf.Live = tf.Own || pid != os.Getpid() && processAlive(pid) || lockedByOther(data)
		}
		out = append(out, tf)
	}
	return out, nil
}

// parseTempName recognises a temporary file of base: ours with its process
// id and the token of the name (PID-RANDOM), or an older version's name.
// The token of a staged shard's own temporary file
// (..BASE.tmp-PID-R.tmp-PID2-R2) is the staged name's (PID-R), that of a
// progress record (TEMP.progress) is TEMP's.
func parseTempName(name, base string) (pid int, token string, ours, legacy bool) {
	rest, ok := strings.CutPrefix(name, ".."+base)
	if !ok || !strings.HasPrefix(rest, tempMarker) {
		// Not a staged shard's own temporary file (..BASE.tmp-PID-R.tmp-PID-R).
		if rest, ok = strings.CutPrefix(name, "."+base); !ok {
			return 0, "", false, false
		}
	}
	switch {
	case strings.HasPrefix(rest, tempMarker):
		digits, tail, ok := strings.Cut(rest[len(tempMarker):], "-")
		if n, err := strconv.Atoi(digits); ok && err == nil && n > 0 && tail != "" {
			// The random part is base 36: a dot starts what follows it.
			random, _, _ := strings.Cut(tail, ".")
			return n, digits + "-" + random, true, false
		}
		return 0, "", false, rest != tempMarker
	case strings.HasPrefix(rest, ".tmp") && len(rest) > len(".tmp"), strings.HasPrefix(rest, ".partial-") && len(rest) > len(".partial-"):
		return 0, "", false, true
	}
	return 0, "", false, false
}
