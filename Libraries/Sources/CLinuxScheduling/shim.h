#ifndef ISLAND_CLINUXSCHEDULING_SHIM_H
#define ISLAND_CLINUXSCHEDULING_SHIM_H
// sched_setattr(2) has no glibc wrapper before 2.41, and syscall(2), being variadic, does not
// import into Swift: this header calls it.
#include <linux/sched.h>
#include <linux/sched/types.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Asks the scheduler for a time slice of `nanoseconds` for the calling thread, keeping its
/// policy and nice value: under EEVDF (Linux 6.12 and later) a thread with a shorter slice than
/// the one running preempts it when it wakes; older kernels ignore the request. Only for the
/// normal and batch policies. Returns 0, or -1 with errno set.
static inline int island_request_time_slice(unsigned long long nanoseconds) {
    struct sched_attr attr = {0};
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) != 0) return -1;
    if (attr.sched_policy != SCHED_NORMAL && attr.sched_policy != SCHED_BATCH) return 0;
    attr.size = sizeof(attr);
    attr.sched_flags = 0;
    attr.sched_runtime = nanoseconds;
    return (int)syscall(SYS_sched_setattr, 0, &attr, 0);
}
#endif
