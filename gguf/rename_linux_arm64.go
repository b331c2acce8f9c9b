package gguf

// sysRenameat2 is renameat2's system call number.
const sysRenameat2 = 276
