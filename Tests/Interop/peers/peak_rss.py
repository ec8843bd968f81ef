"""Peak-memory probe for the interop tests: runs one command and reports its peak resident set.

  peak_rss.py TIMEOUT COMMAND [ARGS...]   prints "STATUS PEAK_KIB" for COMMAND (its stdout goes to
                                          /dev/null); COMMAND is killed after TIMEOUT seconds (STATUS -9)

The peak is ru_maxrss from wait4 on exactly that child. Linux carries the spawning process's own peak
into a child's ru_maxrss across exec, so it is measured from this small interpreter rather than from the
test process (whose RSS would dominate).
"""
import os
import signal
import sys
import time

timeout = float(sys.argv[1])
command = sys.argv[2:]
devnull = os.open(os.devnull, os.O_WRONLY)
pid = os.posix_spawn(command[0], command, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
deadline = time.monotonic() + timeout
while True:
    reaped, status, usage = os.wait4(pid, os.WNOHANG)
    if reaped == pid:
        break
    if time.monotonic() > deadline:
        os.kill(pid, signal.SIGKILL)
        reaped, status, usage = os.wait4(pid, 0)
        break
    time.sleep(0.02)
code = os.waitstatus_to_exitcode(status)
print(code, usage.ru_maxrss)
