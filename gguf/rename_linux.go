package gguf

import (
	"os"
	"syscall"
	"unsafe"
)

// renameNoreplace is RENAME_NOREPLACE: renameat2 fails with EEXIST rather
// than replace the destination.
const renameNoreplace = 1

// atFDCWD is AT_FDCWD: relative paths are relative to the working
// directory. A variable, as the constant's conversion to uintptr would not
// compile.
var atFDCWD = -100

// renameNoReplace renames old to new unless new exists (an error wrapping
// os.ErrExist), in one step: renameat2(RENAME_NOREPLACE). Where the kernel
// or the file system does not have it (ENOSYS before Linux 3.15, EINVAL
// from file systems without the flag, such as some network and FUSE ones;
// EPERM from seccomp filters of container runtimes that predate the
// system call), the link-based way does it instead.
func renameNoReplace(old, new string) error {
	if sysRenameat2 == 0 {
		return linkNoReplace(old, new)
	}
	oldp, err := syscall.BytePtrFromString(old)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	newp, err := syscall.BytePtrFromString(new)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	for {
		_, _, errno := syscall.Syscall6(sysRenameat2, uintptr(atFDCWD), uintptr(unsafe.Pointer(oldp)),
			uintptr(atFDCWD), uintptr(unsafe.Pointer(newp)), renameNoreplace, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		case syscall.ENOSYS, syscall.EINVAL, syscall.EPERM:
			return linkNoReplace(old, new)
		}
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: errno}
	}
}
