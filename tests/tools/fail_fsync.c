// A fault injector for tests, loaded into brokers with LD_PRELOAD: once the file named by FERRY_FAIL_FSYNC_FILE
// exists and holds a path prefix, fsync and fdatasync of any file or directory whose path starts with it fail
// with EIO, as a failing disk's would. Everything else goes to the C library.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fails(int fd) {
  const char* control = getenv("FERRY_FAIL_FSYNC_FILE");
  if (control == NULL) return 0;
  const int cfd = open(control, O_RDONLY | O_CLOEXEC);
  if (cfd < 0) return 0;
  char prefix[4096];
  const ssize_t n = read(cfd, prefix, sizeof prefix - 1);
  close(cfd);
  if (n <= 0) return 0;
  prefix[n] = '\0';
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char path[4096];
  const ssize_t m = readlink(link, path, sizeof path - 2);
  if (m <= 0) return 0;
  path[m] = '/';  // a directory matches a prefix that ends with '/'
  path[m + 1] = '\0';
  return strncmp(path, prefix, strlen(prefix)) == 0;
}

int fsync(int fd) {
  static int (*real)(int) = NULL;
  if (fails(fd)) {
    errno = EIO;
    return -1;
  }
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int) = NULL;
  if (fails(fd)) {
    errno = EIO;
    return -1;
  }
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  return real(fd);
}
