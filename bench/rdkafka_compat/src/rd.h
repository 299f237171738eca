/* Stand-in for librdkafka's internal src/rd.h, which Debian's librdkafka-dev does not ship but its
 * examples/rdkafka_performance.c includes. Only what that example uses. Written for Ferry's bench/. */
#ifndef FERRY_BENCH_RD_H
#define FERRY_BENCH_RD_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>
#include <getopt.h>

#define rd_snprintf snprintf
#define rd_strdup strdup
#define rd_free free
#define rd_malloc malloc
#define rd_calloc calloc
#define RD_MIN(a, b) ((a) < (b) ? (a) : (b))
#define RD_MAX(a, b) ((a) > (b) ? (a) : (b))
#define RD_ARRAYSIZE(A) (sizeof(A) / sizeof(*(A)))
#define RD_UNUSED __attribute__((unused))
#endif
