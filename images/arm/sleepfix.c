/*
 * Preloaded before libfaketime in arm containers:
 *   LD_PRELOAD=/usr/local/lib/harness/sleepfix.so:/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
 *
 * Why: libfaketime 0.9.10 (Debian bookworm) with DONT_FAKE_MONOTONIC=1 mangles absolute
 * CLOCK_MONOTONIC deadlines in clock_nanosleep(), which then fails with EINVAL. Python 3.11's
 * time.sleep() sleeps exactly that way, so every time.sleep() in an arm (SDK retry back-offs
 * included) raised OSError. Upstream: wolfcw/libfaketime issue 426.
 *
 * The monotonic clocks are never faked in arms, so their sleeps go straight to the kernel; every
 * other clock still goes through libfaketime.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);

int clock_nanosleep(clockid_t clock_id, int flags, const struct timespec *request,
                    struct timespec *remain) {
    if (clock_id == CLOCK_MONOTONIC || clock_id == CLOCK_MONOTONIC_RAW ||
        clock_id == CLOCK_BOOTTIME) {
        /* clock_nanosleep returns the error number instead of setting errno. */
        long result = syscall(SYS_clock_nanosleep, clock_id, flags, request, remain);
        return result == 0 ? 0 : errno;
    }
    static clock_nanosleep_fn next;
    if (!next) next = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
    if (!next) return ENOSYS;
    return next(clock_id, flags, request, remain);
}
