package server

import (
	"net"
	"strconv"
	"syscall"
)

// peerCred returns "pid:PID,uid:UID" for the process at the other end of
// c, as the kernel recorded it when it connected (SO_PEERCRED), or "".
func peerCred(c *net.UnixConn) string {
	raw, err := c.SyscallConn()
	if err != nil {
		return ""
	}
	var cred *syscall.Ucred
	if raw.Control(func(fd uintptr) {
		cred, err = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}) != nil || err != nil {
		return ""
	}
	return "pid:" + strconv.Itoa(int(cred.Pid)) + ",uid:" + strconv.FormatUint(uint64(cred.Uid), 10)
}
