package gguf

// sysRenameat2 is renameat2's system call number (the syscall package does
// not name it on amd64).
const sysRenameat2 = 316
