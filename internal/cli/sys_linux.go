package cli

import "syscall"

// freeSpace returns the bytes free on the file system of dir for
// unprivileged users, what df calls available. Root may also use the
// reserve, but a run that lives off it leaves the system without room, so
// the check does not count it.
func freeSpace(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	free := st.Bavail * uint64(st.Bsize)
	if free > 1<<62 {
		free = 1 << 62
	}
	return int64(free), true
}

// fileSystemID identifies the file system dir is on, so that outputs on the
// same one are added up.
func fileSystemID(dir string) (uint64, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Dev), true
}

// writable reports whether this process may create files in dir (or write
// the file dir names): the kernel's own access check, which also sees a
// read-only mount.
func writable(path string) error {
	return syscall.Access(path, 2 /* W_OK */)
}
