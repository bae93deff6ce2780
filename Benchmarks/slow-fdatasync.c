/* A preload library that makes every fdatasync(2) and fsync(2) of a process slower by
 * SLOWSYNC_US microseconds (default 100000) before it runs: a disk that stalls, on demand, to
 * see what waits on the store's commits (docs/benchmarks.md, 2026-12-08 01:39).
 *
 *   gcc -shared -fPIC -O2 -o /tmp/slow-fdatasync.so Benchmarks/slow-fdatasync.c -ldl
 *   SLOWSYNC_US=30000 LD_PRELOAD=/tmp/slow-fdatasync.so python3 Benchmarks/bench.py \
 *       --islandd PATH --skip thr,rss,ready --subs 1 --runs 1
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

static useconds_t delay(void) {
    const char *text = getenv("SLOWSYNC_US");
    return text ? (useconds_t)atoi(text) : 100000;
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    usleep(delay());
    return real(fd);
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    usleep(delay());
    return real(fd);
}
