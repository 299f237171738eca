/* connbench: how fast a broker sets up connections, on OpenSSL alone. Every command prints one JSON object on
 * stdout: {"per_s", "done", "seconds", "p50_ms", "p99_ms"}; any failed connection fails the run (exit 1, the
 * first error on stderr).
 *
 *   connbench handshakes -b HOST:PORT -s SECONDS -t THREADS --ca CA.pem [--cert CERT.pem --key KEY.pem]
 *       THREADS loops of: TCP connect, a full TLS handshake (no session resumption: no cache, no tickets), one
 *       ApiVersions v0 request and its answer (so the broker has finished its side), close
 *   connbench logins -b HOST:PORT -s SECONDS -t THREADS -u USER -w PASSWORD_FILE [--ca CA.pem]
 *       THREADS loops of: TCP connect (with --ca, then a full TLS handshake), SaslHandshake v1 for
 *       SCRAM-SHA-512, the two SaslAuthenticate v1 rounds of RFC 5802 (the server's signature checked), close.
 *       The salted password is derived once (PBKDF2 with the salt and iterations the broker sends), as a
 *       client that logs in again would cache it: the loop measures the broker, not the client's PBKDF2.
 *
 * Built by bench/run into its work directory: gcc -O2 connbench.c -lssl -lcrypto -lpthread
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { API_VERSIONS = 18, SASL_HANDSHAKE = 17, SASL_AUTHENTICATE = 36 };
enum { SHA512_LEN = 64, MAX_FRAME = 1 << 20 };

static const char* host = "127.0.0.1";
static int port = 0;
static int seconds = 5;
static int threads = 4;
static const char *ca = NULL, *cert = NULL, *key = NULL;
static const char* user = NULL;
static char password[256];
static SSL_CTX* tls = NULL;
static double deadline;

/* The salted password, derived once from the first login's salt and iterations. */
static pthread_mutex_t salted_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char salted[SHA512_LEN];
static char salted_for[512]; /* "salt,iterations" it was derived for */

static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_error[512];
static volatile int failed = 0;

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void) {
  fprintf(stderr,
          "usage: connbench handshakes|logins -b HOST:PORT [-s SECONDS] [-t THREADS] [--ca CA] [--cert CERT "
          "--key KEY] [-u USER -w PASSWORD_FILE]\n");
  exit(2);
}

static int fail_with(const char* what) {
  pthread_mutex_lock(&error_lock);
  if (!failed) {
    unsigned long e = ERR_peek_last_error();
    snprintf(first_error, sizeof first_error, "%s%s%s", what, e ? ": " : "", e ? ERR_reason_error_string(e) : "");
  }
  failed = 1;
  pthread_mutex_unlock(&error_lock);
  return -1;
}

/* One connection: a socket, and a TLS session over it when the run has one. */
struct conn {
  int fd;
  SSL* ssl;
};

static int send_all(struct conn* c, const void* buf, size_t n) {
  const char* p = buf;
  while (n > 0) {
    ssize_t w = c->ssl ? SSL_write(c->ssl, p, (int)n) : write(c->fd, p, n);
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int recv_all(struct conn* c, void* buf, size_t n) {
  char* p = buf;
  while (n > 0) {
    ssize_t r = c->ssl ? SSL_read(c->ssl, p, (int)n) : read(c->fd, p, n);
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static int open_conn(struct conn* c) {
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  c->ssl = NULL;
  c->fd = socket(AF_INET, SOCK_STREAM, 0);
  if (c->fd < 0) return fail_with("socket");
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1 || connect(c->fd, (struct sockaddr*)&addr, sizeof addr) != 0) {
    close(c->fd);
    return fail_with("connect");
  }
  if (!tls) return 0;
  c->ssl = SSL_new(tls);
  SSL_set_fd(c->ssl, c->fd);
  SSL_set_tlsext_host_name(c->ssl, "localhost");
  SSL_set1_host(c->ssl, "localhost");
  if (SSL_connect(c->ssl) != 1) {
    SSL_free(c->ssl);
    close(c->fd);
    return fail_with("TLS handshake");
  }
  return 0;
}

static void close_conn(struct conn* c) {
  if (c->ssl) SSL_free(c->ssl); /* no close_notify: as a client that just goes away */
  close(c->fd);
}

static void put16(unsigned char* p, int v) {
  p[0] = (unsigned char)(v >> 8);
  p[1] = (unsigned char)v;
}
static void put32(unsigned char* p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}
static int get16(const unsigned char* p) { return (int16_t)((p[0] << 8) | p[1]); }
static uint32_t get32(const unsigned char* p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* Sends a request (header v1, client id "connbench") and reads the answer's body after its correlation id into
 * `out` (at most `cap` bytes); returns the body's length or -1. */
static long exchange(struct conn* c, int api_key, int version, const unsigned char* body, size_t body_len,
                     unsigned char* out, size_t cap) {
  static const char client_id[] = "connbench";
  unsigned char head[4 + 2 + 2 + 4 + 2 + sizeof client_id - 1];
  put32(head, (uint32_t)(sizeof head - 4 + body_len));
  put16(head + 4, api_key);
  put16(head + 6, version);
  put32(head + 8, 1);
  put16(head + 12, (int)(sizeof client_id - 1));
  memcpy(head + 14, client_id, sizeof client_id - 1);
  if (send_all(c, head, sizeof head) != 0 || (body_len && send_all(c, body, body_len) != 0)) return -1;
  unsigned char len[4], corr[4];
  if (recv_all(c, len, 4) != 0) return -1;
  uint32_t n = get32(len);
  if (n < 4 || n - 4 > cap || n > MAX_FRAME || recv_all(c, corr, 4) != 0) return -1;
  if (recv_all(c, out, n - 4) != 0) return -1;
  return (long)(n - 4);
}

static int base64(const unsigned char* in, int n, char* out) { return EVP_EncodeBlock((unsigned char*)out, in, n); }

static int unbase64(const char* in, size_t n, unsigned char* out) {
  int len = EVP_DecodeBlock(out, (const unsigned char*)in, (int)n);
  if (len < 0) return -1;
  while (n > 0 && in[n - 1] == '=') { /* EVP_DecodeBlock counts the padding as zero bytes */
    len--;
    n--;
  }
  return len;
}

static const char* attribute(const char* msg, char name, size_t* len) {
  for (const char* p = msg; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
    if (p[0] == name && p[1] == '=') {
      const char* end = strchr(p, ',');
      *len = end ? (size_t)(end - p - 2) : strlen(p + 2);
      return p + 2;
    }
  }
  return NULL;
}

static void hmac(const unsigned char* k, const void* data, size_t n, unsigned char* out) {
  unsigned int len = SHA512_LEN;
  HMAC(EVP_sha512(), k, SHA512_LEN, data, n, out, &len);
}

/* SaslAuthenticate v1: sends `msg`, returns the server's bytes in `reply` (NUL-terminated) or -1. */
static int authenticate(struct conn* c, const char* msg, char* reply, size_t cap) {
  size_t n = strlen(msg);
  unsigned char body[1024], resp[2048];
  if (n + 4 > sizeof body) return -1;
  put32(body, (uint32_t)n);
  memcpy(body + 4, msg, n);
  long got = exchange(c, SASL_AUTHENTICATE, 1, body, n + 4, resp, sizeof resp);
  if (got < 4 || get16(resp) != 0) return -1;
  long at = 2;
  int msg_len = get16(resp + at); /* error_message, nullable */
  at += 2 + (msg_len > 0 ? msg_len : 0);
  if (at + 4 > got) return -1;
  uint32_t bytes = get32(resp + at);
  if (at + 4 + (long)bytes > got || bytes + 1 > cap) return -1;
  memcpy(reply, resp + at + 4, bytes);
  reply[bytes] = 0;
  return 0;
}

static int scram_login(struct conn* c) {
  unsigned char body[64], resp[512];
  static const char mechanism[] = "SCRAM-SHA-512";
  put16(body, (int)(sizeof mechanism - 1));
  memcpy(body + 2, mechanism, sizeof mechanism - 1);
  long got = exchange(c, SASL_HANDSHAKE, 1, body, 2 + sizeof mechanism - 1, resp, sizeof resp);
  if (got < 2 || get16(resp) != 0) return fail_with("SaslHandshake SCRAM-SHA-512 refused");

  unsigned char raw_nonce[18];
  char nonce[32], first[512], server_first[1024];
  RAND_bytes(raw_nonce, sizeof raw_nonce);
  base64(raw_nonce, sizeof raw_nonce, nonce);
  snprintf(first, sizeof first, "n,,n=%s,r=%s", user, nonce);
  if (authenticate(c, first, server_first, sizeof server_first) != 0) return fail_with("SCRAM client-first refused");

  size_t r_len, s_len, i_len;
  const char *r = attribute(server_first, 'r', &r_len), *s = attribute(server_first, 's', &s_len),
             *i = attribute(server_first, 'i', &i_len);
  if (!r || !s || !i || r_len < strlen(nonce) || strncmp(r, nonce, strlen(nonce)) != 0 || s_len > 200 || i_len > 10)
    return fail_with("SCRAM server-first malformed");
  char salt_key[512];
  snprintf(salt_key, sizeof salt_key, "%.*s,%.*s", (int)s_len, s, (int)i_len, i);
  pthread_mutex_lock(&salted_lock);
  if (strcmp(salted_for, salt_key) != 0) {
    unsigned char salt[256];
    int salt_len = unbase64(s, s_len, salt);
    if (salt_len < 0 || !PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, salt_len, atoi(salt_key + s_len + 1),
                                           EVP_sha512(), SHA512_LEN, salted)) {
      pthread_mutex_unlock(&salted_lock);
      return fail_with("SCRAM salt");
    }
    strcpy(salted_for, salt_key);
  }
  unsigned char salted_password[SHA512_LEN];
  memcpy(salted_password, salted, sizeof salted_password);
  pthread_mutex_unlock(&salted_lock);

  char without_proof[512], auth_message[2048], final[1024], server_final[512];
  snprintf(without_proof, sizeof without_proof, "c=biws,r=%.*s", (int)r_len, r);
  snprintf(auth_message, sizeof auth_message, "%s,%s,%s", first + 3, server_first, without_proof);
  unsigned char client_key[SHA512_LEN], stored_key[SHA512_LEN], signature[SHA512_LEN], proof[SHA512_LEN];
  hmac(salted_password, "Client Key", 10, client_key);
  EVP_Digest(client_key, SHA512_LEN, stored_key, NULL, EVP_sha512(), NULL);
  hmac(stored_key, auth_message, strlen(auth_message), signature);
  for (int k = 0; k < SHA512_LEN; k++) proof[k] = client_key[k] ^ signature[k];
  char proof64[128];
  base64(proof, SHA512_LEN, proof64);
  snprintf(final, sizeof final, "%s,p=%s", without_proof, proof64);
  if (authenticate(c, final, server_final, sizeof server_final) != 0) return fail_with("SCRAM client-final refused");

  unsigned char server_key[SHA512_LEN], server_signature[SHA512_LEN];
  char expected[128];
  hmac(salted_password, "Server Key", 10, server_key);
  hmac(server_key, auth_message, strlen(auth_message), server_signature);
  base64(server_signature, SHA512_LEN, expected);
  size_t v_len;
  const char* v = attribute(server_final, 'v', &v_len);
  if (!v || v_len != strlen(expected) || strncmp(v, expected, v_len) != 0)
    return fail_with("SCRAM server signature wrong");
  return 0;
}

static int logins_mode = 0;

static int one_connection(void) {
  struct conn c;
  if (open_conn(&c) != 0) return -1;
  int rc;
  if (logins_mode) {
    rc = scram_login(&c);
  } else {
    unsigned char resp[8192];
    long got = exchange(&c, API_VERSIONS, 0, NULL, 0, resp, sizeof resp);
    rc = got >= 2 && get16(resp) == 0 ? 0 : fail_with("ApiVersions over TLS failed");
  }
  close_conn(&c);
  return rc;
}

struct worker {
  pthread_t thread;
  double* ms;
  long n, cap;
};

static void* run_worker(void* arg) {
  struct worker* w = arg;
  while (!failed && mono_now() < deadline) {
    double t0 = mono_now();
    if (one_connection() != 0) break;
    if (w->n == w->cap) {
      w->cap = w->cap ? w->cap * 2 : 1024;
      w->ms = realloc(w->ms, (size_t)w->cap * sizeof *w->ms);
      if (!w->ms) abort();
    }
    w->ms[w->n++] = (mono_now() - t0) * 1000;
  }
  return NULL;
}

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc < 2) usage();
  const char* mode = argv[1];
  if (strcmp(mode, "logins") == 0) {
    logins_mode = 1;
  } else if (strcmp(mode, "handshakes") != 0) {
    usage();
  }
  static const struct option longs[] = {{"ca", required_argument, NULL, 'C'},
                                        {"cert", required_argument, NULL, 'E'},
                                        {"key", required_argument, NULL, 'K'},
                                        {NULL, 0, NULL, 0}};
  static char hostbuf[256];
  const char* password_file = NULL;
  int opt;
  optind = 2;
  while ((opt = getopt_long(argc, argv, "b:s:t:u:w:", longs, NULL)) != -1) {
    switch (opt) {
      case 'b': {
        const char* colon = strrchr(optarg, ':');
        if (!colon || (size_t)(colon - optarg) >= sizeof hostbuf) usage();
        memcpy(hostbuf, optarg, (size_t)(colon - optarg));
        host = hostbuf;
        port = atoi(colon + 1);
        break;
      }
      case 's':
        seconds = atoi(optarg);
        break;
      case 't':
        threads = atoi(optarg);
        break;
      case 'u':
        user = optarg;
        break;
      case 'w':
        password_file = optarg;
        break;
      case 'C':
        ca = optarg;
        break;
      case 'E':
        cert = optarg;
        break;
      case 'K':
        key = optarg;
        break;
      default:
        usage();
    }
  }
  if (!port || seconds <= 0 || threads <= 0 || (!logins_mode && !ca) || (logins_mode && (!user || !password_file)))
    usage();
  if (password_file) {
    FILE* f = fopen(password_file, "r");
    if (!f || !fgets(password, sizeof password, f)) {
      fprintf(stderr, "connbench: cannot read %s\n", password_file);
      return 2;
    }
    fclose(f);
    password[strcspn(password, "\r\n")] = 0;
  }
  if (ca) {
    tls = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_session_cache_mode(tls, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(tls, SSL_OP_NO_TICKET);
    SSL_CTX_set_verify(tls, SSL_VERIFY_PEER, NULL);
    if (SSL_CTX_load_verify_locations(tls, ca, NULL) != 1 ||
        (cert && (SSL_CTX_use_certificate_chain_file(tls, cert) != 1 ||
                  SSL_CTX_use_PrivateKey_file(tls, key ? key : cert, SSL_FILETYPE_PEM) != 1))) {
      fprintf(stderr, "connbench: cannot load the CA or the client certificate\n");
      return 2;
    }
  }
  struct worker* workers = calloc((size_t)threads, sizeof *workers);
  double start = mono_now();
  deadline = start + seconds;
  for (int t = 0; t < threads; t++) pthread_create(&workers[t].thread, NULL, run_worker, &workers[t]);
  long done = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(workers[t].thread, NULL);
    done += workers[t].n;
  }
  double elapsed = mono_now() - start;
  if (failed) {
    fprintf(stderr, "connbench: %s\n", first_error);
    return 1;
  }
  double* all = malloc((size_t)(done ? done : 1) * sizeof *all);
  long at = 0;
  for (int t = 0; t < threads; t++) {
    memcpy(all + at, workers[t].ms, (size_t)workers[t].n * sizeof *all);
    at += workers[t].n;
  }
  qsort(all, (size_t)done, sizeof *all, by_value);
  printf("{\"per_s\": %.1f, \"done\": %ld, \"seconds\": %.2f, \"p50_ms\": %.3f, \"p99_ms\": %.3f}\n", done / elapsed,
         done, elapsed, done ? all[done / 2] : 0.0, done ? all[(long)(done * 0.99)] : 0.0);
  return 0;
}
