/* Stand-in for librdkafka's internal src/rdtime.h (see ../src/rd.h). */
#ifndef FERRY_BENCH_RDTIME_H
#define FERRY_BENCH_RDTIME_H
#include <time.h>
#include <stdint.h>
typedef int64_t rd_ts_t;
/* Monotonic microseconds, as librdkafka's rd_clock(). */
static inline rd_ts_t rd_clock(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ((rd_ts_t)ts.tv_sec * 1000000LL) + ((rd_ts_t)ts.tv_nsec / 1000);
}
/* Wall-clock microseconds, as librdkafka's rd_uclock(). */
static inline rd_ts_t rd_uclock(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return ((rd_ts_t)ts.tv_sec * 1000000LL) + ((rd_ts_t)ts.tv_nsec / 1000);
}
#endif
