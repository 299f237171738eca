/* benchtool: the small helpers bench/run needs besides the load generators, on librdkafka alone (no
 * Python Kafka client, no JVM start per call). Every command prints one JSON object on stdout.
 *
 *   benchtool ready -b BROKERS [-w SECONDS]
 *       wait until a Metadata request succeeds and names at least one broker
 *   benchtool create-topic -b BROKERS -t TOPIC -p PARTITIONS [-R RF] [-T TOPICS] [-w SECONDS] [-c KEY=VALUE ...]
 *       CreateTopics (replication factor RF, default 1, the given topic configs), then wait until every
 *       partition has a leader; with -T, the TOPICS topics TOPIC-0 .. TOPIC-<TOPICS-1>, about 1,000
 *       partitions per request
 *   benchtool delete-topic -b BROKERS -t TOPIC
 *   benchtool paced-produce -b BROKERS -t TOPIC -s SIZE -r RATE -n COUNT [-p PARTITION] [-a ACKS]
 *       produce COUNT records of SIZE bytes at RATE records/s (acks=ACKS, default 1; linger.ms=0), sleeping until each
 *       record's due time (no spinning), with the payload "LATENCY:<wall-clock microseconds>" that
 *       rdkafka_performance -C -l reads to measure end-to-end latency. Also prints the acknowledgement
 *       latency (send to delivery report) percentiles of all but the first DROP records (-d DROP, default 0)
 *   benchtool leaders -b BROKERS -n PARTITIONS [-x DEAD_ID] [-i] [-w SECONDS]
 *       wait until the cluster's metadata holds at least PARTITIONS partitions (topics named __* aside),
 *       each led by a broker the metadata lists, other than DEAD_ID; with -i also each with its whole
 *       replica set in sync. Prints the CLOCK_MONOTONIC time it first held ("at") and how many partitions
 *       each broker led at the first answer and at the end
 *   benchtool commit-load -b BROKERS -t TOPIC -g GROUPS -n MEMBERS -s SECONDS [-d WARMUP_SECONDS] [-w SECONDS]
 *       GROUPS consumer groups TOPIC-0 .. TOPIC-<GROUPS-1> of MEMBERS consumers each (one librdkafka client and
 *       thread per member), subscribed to TOPIC, which has MEMBERS partitions; once every member holds one
 *       partition, fetching is paused and each member commits an explicit offset of its partition (one more
 *       each time) synchronously in a loop. Prints the commits completed per second over all members and the
 *       commit latency percentiles of the SECONDS after WARMUP_SECONDS (default 2); any failed commit fails it
 *   benchtool controller -z ZOOKEEPER[/CHROOT]
 *       the broker id in the /controller znode (Kafka's and Ferry's ZooKeeper layout)
 *   benchtool loopback -s SECONDS
 *       one TCP stream over 127.0.0.1, 1 MiB writes, for SECONDS: the network ceiling of this machine
 *   benchtool pagecache-write -f FILE -m MIB
 *       write MIB MiB to FILE in 1 MiB writes without fsync, then unlink it: the page-cache ceiling
 *
 * Every command that talks to brokers takes -X KEY=VALUE (repeatable): a librdkafka setting for its clients,
 * such as security.protocol=ssl and the ssl.* files of a TLS listener.
 *
 * Built by bench/run into its work directory: gcc -O2 benchtool.c -lrdkafka -lzookeeper_mt -lpthread
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#define THREADED /* the synchronous API of libzookeeper_mt */
#include <zookeeper/zookeeper.h>

static const char *brokers = NULL;
static const char *topic = NULL;
static int partitions = 1;
static int partition = RD_KAFKA_PARTITION_UA;
static int wait_s = 60;
static int size = 100;
static double rate = 1000.0;
static long count = 1000;
static int seconds = 3;
static const char *file = NULL;
static long mib = 256;
static long drop = 0;
static int replication_factor = 1;
static int topic_count = 0; /* 0: the one topic TOPIC; else TOPIC-0 .. TOPIC-<topic_count-1> */
static int group_count = 1;
static int members_per_group = 1;
static const char *acks = "1";
static int dead_broker = -1;
static int want_in_sync = 0;
static const char *zookeeper = NULL;
#define MAX_TOPIC_CONFIGS 16
static const char *topic_configs[MAX_TOPIC_CONFIGS];
static int topic_config_count = 0;
#define MAX_CLIENT_SETTINGS 16
static const char *client_settings[MAX_CLIENT_SETTINGS]; /* -X KEY=VALUE */
static int client_setting_count = 0;

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t wall_us(void) { /* as rdkafka_performance's wall_clock() */
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static void fail(const char *what, const char *detail) {
  printf("{\"ok\": false, \"error\": \"%s: %s\"}\n", what, detail);
  fflush(stdout);
  exit(1);
}

/* A client configuration with the bootstrap servers, quiet logs and the -X settings. */
static rd_kafka_conf_t *base_conf(void) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers, err, sizeof err) != RD_KAFKA_CONF_OK) fail("conf", err);
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
  for (int i = 0; i < client_setting_count; i++) {
    char name[128];
    const char *eq = strchr(client_settings[i], '=');
    if (!eq || (size_t)(eq - client_settings[i]) >= sizeof name) fail("usage", "-X needs KEY=VALUE");
    memcpy(name, client_settings[i], (size_t)(eq - client_settings[i]));
    name[eq - client_settings[i]] = 0;
    if (rd_kafka_conf_set(conf, name, eq + 1, err, sizeof err) != RD_KAFKA_CONF_OK) fail("-X", err);
  }
  return conf;
}

static rd_kafka_t *client(rd_kafka_type_t type, int linger0) {
  char err[512];
  rd_kafka_conf_t *conf = base_conf();
  /* A CreateTopics of many partitions may take the controller longer than the default 60 s to answer. */
  char timeout_ms[32];
  snprintf(timeout_ms, sizeof timeout_ms, "%d", (wait_s + 30) * 1000);
  rd_kafka_conf_set(conf, "socket.timeout.ms", timeout_ms, err, sizeof err);
  if (type == RD_KAFKA_PRODUCER) {
    rd_kafka_conf_set(conf, "acks", "1", err, sizeof err);
    if (linger0) rd_kafka_conf_set(conf, "linger.ms", "0", err, sizeof err);
  }
  rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof err);
  if (!rk) fail("rd_kafka_new", err);
  return rk;
}

/* 1 when TOPIC exists with `want` partitions (any number when want < 0), each with a leader. */
static int topic_ready(rd_kafka_t *rk, int want) {
  const struct rd_kafka_metadata *md = NULL;
  rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
  rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, rkt, &md, 2000);
  rd_kafka_topic_destroy(rkt);
  if (e) return 0;
  int ok = md->topic_cnt == 1 && md->topics[0].err == 0 && md->topics[0].partition_cnt > 0 &&
           (want < 0 || md->topics[0].partition_cnt == want);
  for (int i = 0; ok && i < md->topics[0].partition_cnt; i++)
    ok = md->topics[0].partitions[i].err == 0 && md->topics[0].partitions[i].leader >= 0;
  rd_kafka_metadata_destroy(md);
  return ok;
}

#define MAX_BROKER_ID 64
/* 1 when the cluster's metadata holds at least `want` partitions outside __* topics, each led by a listed
 * broker other than dead_broker (and, with in_sync, with every replica in its ISR). Fills led[id] with the
 * number of partitions each broker leads (when led is not NULL). */
static int cluster_led(rd_kafka_t *rk, long want, int in_sync, long *led) {
  const struct rd_kafka_metadata *md = NULL;
  if (rd_kafka_metadata(rk, 1, NULL, &md, 10000)) return 0;
  if (led) memset(led, 0, sizeof(long) * MAX_BROKER_ID);
  long total = 0;
  int ok = 1;
  for (int t = 0; t < md->topic_cnt; t++) {
    const rd_kafka_metadata_topic_t *mt = &md->topics[t];
    if (!strncmp(mt->topic, "__", 2)) continue;
    if (mt->err) ok = 0;
    for (int p = 0; p < mt->partition_cnt; p++) {
      const rd_kafka_metadata_partition_t *mp = &mt->partitions[p];
      int listed = 0;
      for (int b = 0; b < md->broker_cnt; b++) listed |= md->brokers[b].id == mp->leader;
      if (!listed || mp->leader == dead_broker || (in_sync && mp->isr_cnt < mp->replica_cnt)) ok = 0;
      if (led && mp->leader >= 0 && mp->leader < MAX_BROKER_ID) led[mp->leader]++;
      total++;
    }
  }
  rd_kafka_metadata_destroy(md);
  return ok && total >= want;
}

static void print_led(const char *name, const long *led) {
  printf("\"%s\": {", name);
  const char *sep = "";
  for (int b = 0; b < MAX_BROKER_ID; b++)
    if (led[b]) printf("%s\"%d\": %ld", sep, b, led[b]), sep = ", ";
  printf("}");
}

static int cmd_leaders(void) {
  rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, 0);
  long first[MAX_BROKER_ID] = {0}, last[MAX_BROKER_ID] = {0};
  double deadline = mono_now() + wait_s;
  int polls = 0;
  for (;;) {
    int done = cluster_led(rk, count, want_in_sync, polls ? last : first);
    double at = mono_now();
    polls++;
    if (done) {
      if (polls == 1) memcpy(last, first, sizeof last);
      printf("{\"ok\": true, \"at\": %.3f, \"polls\": %d, ", at, polls);
      print_led("first", first);
      printf(", ");
      print_led("last", last);
      printf("}\n");
      break;
    }
    if (at > deadline) fail("leaders", "not every partition is led in time");
    usleep(20000);
  }
  rd_kafka_destroy(rk);
  return 0;
}

static int cmd_controller(void) {
  zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
  zhandle_t *zh = zookeeper_init(zookeeper, NULL, 10000, NULL, NULL, 0);
  if (!zh) fail("zookeeper_init", strerror(errno));
  char buf[512];
  int rc = ZCONNECTIONLOSS;
  for (double deadline = mono_now() + wait_s; rc == ZCONNECTIONLOSS && mono_now() < deadline;) {
    int len = sizeof buf - 1;
    rc = zoo_get(zh, "/controller", 0, buf, &len, NULL);
    if (rc == ZOK) buf[len < 0 ? 0 : len] = '\0';
    else if (rc == ZCONNECTIONLOSS) usleep(100000);
  }
  zookeeper_close(zh);
  if (rc != ZOK) fail("/controller", zerror(rc));
  const char *id = strstr(buf, "\"brokerid\"");
  if (!id || !(id = strchr(id, ':'))) fail("/controller", "no brokerid");
  printf("{\"ok\": true, \"controller\": %d}\n", atoi(id + 1));
  return 0;
}

static int cmd_ready(void) {
  rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, 0);
  double deadline = mono_now() + wait_s;
  const char *last = "no answer";
  while (mono_now() < deadline) {
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, NULL, &md, 2000);
    if (!e) {
      int n = md->broker_cnt;
      rd_kafka_metadata_destroy(md);
      if (n > 0) {
        printf("{\"ok\": true, \"brokers\": %d}\n", n);
        rd_kafka_destroy(rk);
        return 0;
      }
    } else {
      last = rd_kafka_err2str(e);
    }
    usleep(200000);
  }
  fail("not ready", last);
  return 1;
}

static int admin_result(rd_kafka_t *rk, rd_kafka_queue_t *q, int create) {
  rd_kafka_event_t *ev = rd_kafka_queue_poll(q, (wait_s + 30) * 1000);
  if (!ev) fail("admin", "no result in time");
  if (rd_kafka_event_error(ev)) fail("admin", rd_kafka_event_error_string(ev));
  size_t n = 0;
  const rd_kafka_topic_result_t **res;
  if (create)
    res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
  else
    res = rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &n);
  for (size_t i = 0; i < n; i++) {
    rd_kafka_resp_err_t e = rd_kafka_topic_result_error(res[i]);
    if (e && !(create && e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)) {
      const char *s = rd_kafka_topic_result_error_string(res[i]);
      fail(rd_kafka_err2name(e), s ? s : "");
    }
  }
  rd_kafka_event_destroy(ev);
  (void)rk;
  return 0;
}

static int cmd_create_topic(void) {
  char err[512];
  rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, 0);
  rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
  int n = topic_count > 0 ? topic_count : 1;
  rd_kafka_NewTopic_t **nts = calloc((size_t)n, sizeof *nts);
  for (int t = 0; t < n; t++) {
    char name[512];
    if (topic_count > 0) snprintf(name, sizeof name, "%s-%d", topic, t);
    else snprintf(name, sizeof name, "%s", topic);
    nts[t] = rd_kafka_NewTopic_new(name, partitions, replication_factor, err, sizeof err);
    if (!nts[t]) fail("NewTopic", err);
    for (int i = 0; i < topic_config_count; i++) {
      char key[256];
      const char *eq = strchr(topic_configs[i], '=');
      if (!eq || (size_t)(eq - topic_configs[i]) >= sizeof key) fail("usage", "-c needs KEY=VALUE");
      memcpy(key, topic_configs[i], (size_t)(eq - topic_configs[i]));
      key[eq - topic_configs[i]] = '\0';
      if (rd_kafka_NewTopic_set_config(nts[t], key, eq + 1)) fail("NewTopic config", topic_configs[i]);
    }
  }
  double t0 = mono_now();
  rd_kafka_AdminOptions_t *opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  /* Many partitions take the controller a while to write; wait for its answer as long as for the leaders. */
  rd_kafka_AdminOptions_set_operation_timeout(opts, wait_s * 1000, err, sizeof err);
  rd_kafka_AdminOptions_set_request_timeout(opts, wait_s * 1000, err, sizeof err);
  /* At most about 1,000 partitions per request: KRaft refuses an operation of more than 10,000 metadata
   * records (POLICY_VIOLATION), and a ZooKeeper-mode controller answers a huge one after the client gave up. */
  int per_request = partitions < 1 || partitions >= 1000 ? 1 : 1000 / partitions;
  for (int first = 0; first < n; first += per_request) {
    int count = n - first < per_request ? n - first : per_request;
    rd_kafka_CreateTopics(rk, nts + first, (size_t)count, opts, q);
    admin_result(rk, q, 1);
    if (n > per_request) fprintf(stderr, "benchtool: created %d of %d topics\n", first + count, n);
  }
  rd_kafka_AdminOptions_destroy(opts);
  for (int t = 0; t < n; t++) rd_kafka_NewTopic_destroy(nts[t]);
  free(nts);
  double deadline = mono_now() + wait_s;
  while (topic_count > 0 ? !cluster_led(rk, (long)n * partitions, 0, NULL) : !topic_ready(rk, partitions)) {
    if (mono_now() > deadline) fail("create-topic", "partitions have no leader in time");
    usleep(100000);
  }
  printf("{\"ok\": true, \"seconds\": %.3f}\n", mono_now() - t0);
  rd_kafka_queue_destroy(q);
  rd_kafka_destroy(rk);
  return 0;
}

static int cmd_delete_topic(void) {
  rd_kafka_t *rk = client(RD_KAFKA_PRODUCER, 0);
  rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
  rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(topic);
  rd_kafka_DeleteTopics(rk, &dt, 1, NULL, q);
  admin_result(rk, q, 0);
  rd_kafka_DeleteTopic_destroy(dt);
  printf("{\"ok\": true}\n");
  rd_kafka_queue_destroy(q);
  rd_kafka_destroy(rk);
  return 0;
}

static long delivered_ok = 0, delivered_err = 0;
static double *ack_latency_ms = NULL; /* per record, by its index (the message opaque) */
static double *sent_at = NULL;
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk, (void)opaque;
  /* Atomic: rd_kafka_flush() on the main thread may serve reports beside the poller thread. */
  __atomic_fetch_add(m->err ? &delivered_err : &delivered_ok, 1, __ATOMIC_RELAXED);
  long i = (long)(intptr_t)m->_private;
  if (!m->err && i >= 0 && i < count) ack_latency_ms[i] = (mono_now() - sent_at[i]) * 1e3;
}

static volatile int polling = 0;
static void *serve_delivery_reports(void *rk) {
  while (polling) rd_kafka_poll((rd_kafka_t *)rk, 50);
  return NULL;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The q-quantile (nearest rank) of the n sorted values. */
static double quantile(const double *sorted, long n, double q) {
  if (n <= 0) return 0;
  long rank = (long)(q * (double)n + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return sorted[rank - 1];
}

static int cmd_paced_produce(void) {
  char err[512];
  rd_kafka_conf_t *conf = base_conf();
  if (rd_kafka_conf_set(conf, "acks", acks, err, sizeof err) != RD_KAFKA_CONF_OK) fail("acks", err);
  rd_kafka_conf_set(conf, "linger.ms", "0", err, sizeof err);
  /* After a restart, reconnect at once instead of backing off for seconds (librdkafka's max is 10 s). */
  rd_kafka_conf_set(conf, "reconnect.backoff.ms", "20", err, sizeof err);
  rd_kafka_conf_set(conf, "reconnect.backoff.max.ms", "100", err, sizeof err);
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) fail("rd_kafka_new", err);
  rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
  if (size < 32) size = 32;
  char *buf = malloc((size_t)size);
  memset(buf, 'x', (size_t)size);
  /* Connect and learn the leaders before the clock starts. */
  for (double deadline = mono_now() + wait_s; !topic_ready(rk, -1); usleep(100000))
    if (mono_now() > deadline) fail("paced-produce", "topic has no leaders");
  ack_latency_ms = malloc(sizeof(double) * (size_t)count);
  sent_at = malloc(sizeof(double) * (size_t)count);
  for (long i = 0; i < count; i++) ack_latency_ms[i] = -1;
  /* Delivery reports are served on a thread of their own as soon as they arrive, so an acknowledgement's
   * latency is not rounded up to the pacing loop's next wake-up. */
  pthread_t poller;
  polling = 1;
  pthread_create(&poller, NULL, serve_delivery_reports, rk);
  long late = 0;
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  double t0 = mono_now();
  long interval_ns = (long)(1e9 / rate);
  for (long i = 0; i < count; i++) {
    next.tv_nsec += interval_ns;
    while (next.tv_nsec >= 1000000000L) { next.tv_nsec -= 1000000000L; next.tv_sec++; }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec + 1000000L)) late++;
    /* Sleep until the record is due; the poller thread serves delivery reports meanwhile. */
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    int n = snprintf(buf, (size_t)size, "LATENCY:%" PRIu64, wall_us());
    buf[n] = ' '; /* keep the record SIZE bytes; the consumer's sscanf stops at the space */
    sent_at[i] = mono_now();
    while (rd_kafka_produce(rkt, partition, RD_KAFKA_MSG_F_COPY, buf, (size_t)size, NULL, 0, (void *)(intptr_t)i) ==
           -1) {
      if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL) fail("produce", rd_kafka_err2str(rd_kafka_last_error()));
      usleep(10000);
    }
  }
  double send_s = mono_now() - t0;
  rd_kafka_flush(rk, 30000);
  polling = 0;
  pthread_join(poller, NULL);
  long measured = 0;
  double sum = 0;
  for (long i = drop; i < count; i++)
    if (ack_latency_ms[i] >= 0) {
      ack_latency_ms[measured++] = ack_latency_ms[i];
      sum += ack_latency_ms[i];
    }
  qsort(ack_latency_ms, (size_t)measured, sizeof(double), by_value);
  printf("{\"ok\": %s, \"sent\": %ld, \"delivered\": %ld, \"failed\": %ld, \"seconds\": %.3f, "
         "\"rate\": %.1f, \"late\": %ld, \"ack_samples\": %ld, \"ack_p50_ms\": %.3f, \"ack_p99_ms\": %.3f, "
         "\"ack_p999_ms\": %.3f, \"ack_max_ms\": %.3f, \"ack_avg_ms\": %.3f}\n",
         delivered_err ? "false" : "true", count, delivered_ok, delivered_err, send_s, count / send_s, late, measured,
         quantile(ack_latency_ms, measured, 0.50), quantile(ack_latency_ms, measured, 0.99),
         quantile(ack_latency_ms, measured, 0.999), measured ? ack_latency_ms[measured - 1] : 0,
         measured ? sum / (double)measured : 0);
  free(ack_latency_ms);
  free(sent_at);
  free(buf);
  rd_kafka_topic_destroy(rkt);
  rd_kafka_destroy(rk);
  return delivered_err ? 1 : 0;
}

/* commit-load: one librdkafka consumer and one thread per member, as members in processes of their own would
 * each have their own client and connections. */
enum { JOINING, COMMITTING, STOPPING };
static int commit_phase = JOINING;
static int members_assigned = 0;
static double window_start, window_end;

struct member {
  rd_kafka_t *rk;
  pthread_t thread;
  int32_t partition;
  double *latency_ms; /* of the commits completed in the measured window */
  long samples, capacity;
  long failed;
  rd_kafka_resp_err_t first_error;
};

static rd_kafka_t *subscribed_consumer(const char *group_id) {
  char err[512];
  rd_kafka_conf_t *conf = base_conf();
  rd_kafka_conf_set(conf, "group.id", group_id, err, sizeof err);
  rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!rk) fail("rd_kafka_new", err);
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t *subscription = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(subscription, topic, RD_KAFKA_PARTITION_UA);
  rd_kafka_resp_err_t e = rd_kafka_subscribe(rk, subscription);
  if (e) fail("subscribe", rd_kafka_err2str(e));
  rd_kafka_topic_partition_list_destroy(subscription);
  return rk;
}

/* Whether the member holds exactly one partition; sets m->partition to it. */
static int holds_one_partition(struct member *m) {
  rd_kafka_topic_partition_list_t *assignment = NULL;
  int one = !rd_kafka_assignment(m->rk, &assignment) && assignment->cnt == 1;
  if (one) m->partition = assignment->elems[0].partition;
  if (assignment) rd_kafka_topic_partition_list_destroy(assignment);
  return one;
}

static void *run_member(void *arg) {
  struct member *m = arg;
  int counted = 0;
  /* Serve the group's rebalances (librdkafka assigns on poll) until every member holds its partition. */
  while (__atomic_load_n(&commit_phase, __ATOMIC_ACQUIRE) == JOINING) {
    rd_kafka_message_t *msg = rd_kafka_consumer_poll(m->rk, 100);
    if (msg) rd_kafka_message_destroy(msg);
    int one = holds_one_partition(m);
    if (one != counted) __atomic_add_fetch(&members_assigned, one ? 1 : -1, __ATOMIC_RELEASE);
    counted = one;
  }
  rd_kafka_topic_partition_list_t *offsets = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(offsets, topic, m->partition);
  rd_kafka_pause_partitions(m->rk, offsets); /* only commits (and heartbeats) load the broker */
  for (int64_t next = 1; __atomic_load_n(&commit_phase, __ATOMIC_ACQUIRE) == COMMITTING; next++) {
    tp->offset = next;
    double t0 = mono_now();
    rd_kafka_resp_err_t e = rd_kafka_commit(m->rk, offsets, 0);
    double t1 = mono_now();
    if (e) {
      if (!m->failed++) m->first_error = e;
    } else if (t1 >= window_start && t1 <= window_end) {
      if (m->samples == m->capacity) {
        m->capacity = m->capacity ? m->capacity * 2 : 4096;
        m->latency_ms = realloc(m->latency_ms, sizeof(double) * (size_t)m->capacity);
      }
      m->latency_ms[m->samples++] = (t1 - t0) * 1e3;
    }
    rd_kafka_message_t *msg = rd_kafka_consumer_poll(m->rk, 0); /* events, and max.poll.interval.ms */
    if (msg) rd_kafka_message_destroy(msg);
  }
  rd_kafka_topic_partition_list_destroy(offsets);
  rd_kafka_consumer_close(m->rk);
  rd_kafka_destroy(m->rk);
  return NULL;
}

static int cmd_commit_load(void) {
  int total = group_count * members_per_group;
  struct member *members = calloc((size_t)total, sizeof *members);
  double t0 = mono_now();
  for (int i = 0; i < total; i++) {
    char group_id[512];
    snprintf(group_id, sizeof group_id, "%s-%d", topic, i / members_per_group);
    members[i].rk = subscribed_consumer(group_id);
    pthread_create(&members[i].thread, NULL, run_member, &members[i]);
  }
  /* Every member holding one partition means every group has all its members in its latest generation; it
   * has to hold for a second, so that no rebalance is still on its way. */
  double deadline = t0 + wait_s, all_since = 0, last_report = t0;
  for (;;) {
    int assigned = __atomic_load_n(&members_assigned, __ATOMIC_ACQUIRE);
    double now = mono_now();
    if (assigned < total) all_since = 0;
    else if (!all_since) all_since = now;
    if (all_since && now - all_since >= 1.0) break;
    if (now > deadline) {
      char detail[128];
      snprintf(detail, sizeof detail, "only %d of %d members hold a partition after %d s", assigned, total, wait_s);
      fail("commit-load", detail);
    }
    if (now - last_report >= 2.0) {
      fprintf(stderr, "benchtool: %d of %d members hold their partition\n", assigned, total);
      last_report = now;
    }
    usleep(50000);
  }
  double join_s = mono_now() - t0;
  fprintf(stderr, "benchtool: %d groups of %d members formed in %.1f s; committing for %ld + %d s\n", group_count,
          members_per_group, join_s, drop, seconds);
  window_start = mono_now() + (double)drop;
  window_end = window_start + seconds;
  __atomic_store_n(&commit_phase, COMMITTING, __ATOMIC_RELEASE);
  while (mono_now() < window_end + 0.2) usleep(100000);
  __atomic_store_n(&commit_phase, STOPPING, __ATOMIC_RELEASE);
  long samples = 0, failed = 0;
  rd_kafka_resp_err_t first_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  for (int i = 0; i < total; i++) {
    pthread_join(members[i].thread, NULL);
    samples += members[i].samples;
    failed += members[i].failed;
    if (!first_error) first_error = members[i].first_error;
  }
  double *latency = malloc(sizeof(double) * (size_t)(samples ? samples : 1));
  double sum = 0;
  long n = 0;
  for (int i = 0; i < total; i++) {
    for (long j = 0; j < members[i].samples; j++) sum += latency[n++] = members[i].latency_ms[j];
    free(members[i].latency_ms);
  }
  qsort(latency, (size_t)n, sizeof(double), by_value);
  printf("{\"ok\": %s, \"error\": \"%s\", \"groups\": %d, \"members\": %d, \"join_s\": %.3f, \"seconds\": %d, "
         "\"commits\": %ld, \"commits_per_s\": %.1f, \"failed\": %ld, \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
         "\"p999_ms\": %.3f, \"max_ms\": %.3f, \"avg_ms\": %.3f}\n",
         failed || !n ? "false" : "true",
         failed ? rd_kafka_err2name(first_error) : n ? "" : "no commit completed", group_count, total, join_s,
         seconds, n, (double)n / seconds, failed, quantile(latency, n, 0.50), quantile(latency, n, 0.99),
         quantile(latency, n, 0.999), n ? latency[n - 1] : 0, n ? sum / (double)n : 0);
  free(latency);
  free(members);
  return failed || !n ? 1 : 0;
}

static volatile int loop_run = 1;
static long long loop_received = 0;
static void *loop_reader(void *arg) {
  int fd = *(int *)arg;
  char *b = malloc(1 << 20);
  ssize_t r;
  while ((r = read(fd, b, 1 << 20)) > 0) loop_received += r;
  free(b);
  return NULL;
}

static int cmd_loopback(void) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1) || getsockname(ls, (struct sockaddr *)&a, &al))
    fail("loopback", strerror(errno));
  int c = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(c, (struct sockaddr *)&a, sizeof a)) fail("connect", strerror(errno));
  int s = accept(ls, NULL, NULL);
  pthread_t th;
  pthread_create(&th, NULL, loop_reader, &s);
  char *b = calloc(1, 1 << 20);
  double t0 = mono_now(), end = t0 + seconds;
  long long sent = 0;
  while (mono_now() < end) {
    ssize_t w = write(c, b, 1 << 20);
    if (w < 0) fail("write", strerror(errno));
    sent += w;
  }
  shutdown(c, SHUT_WR);
  pthread_join(th, NULL);
  double dt = mono_now() - t0;
  printf("{\"ok\": true, \"bytes\": %lld, \"seconds\": %.3f, \"MBps\": %.1f}\n", loop_received, dt, loop_received / dt / 1e6);
  free(b);
  close(c), close(s), close(ls);
  return 0;
}

static int cmd_pagecache_write(void) {
  int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail("open", strerror(errno));
  char *b = malloc(1 << 20);
  memset(b, 'x', 1 << 20);
  double t0 = mono_now();
  for (long i = 0; i < mib; i++)
    if (write(fd, b, 1 << 20) != 1 << 20) fail("write", strerror(errno));
  double dt = mono_now() - t0;
  close(fd);
  unlink(file);
  printf("{\"ok\": true, \"bytes\": %lld, \"seconds\": %.3f, \"MBps\": %.1f}\n", (long long)mib << 20, dt,
         (double)(mib << 20) / dt / 1e6);
  free(b);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: benchtool ready|create-topic|delete-topic|paced-produce|commit-load|leaders|controller|"
                    "loopback|pagecache-write ...\n");
    return 2;
  }
  const char *cmd = argv[1];
  int opt;
  optind = 2;
  while ((opt = getopt(argc, argv, "b:t:p:w:s:r:n:f:m:c:d:R:T:a:x:iz:g:X:")) != -1) {
    switch (opt) {
      case 'b': brokers = optarg; break;
      case 't': topic = optarg; break;
      case 'p': partitions = partition = atoi(optarg); break;
      case 'w': wait_s = atoi(optarg); break;
      case 's': size = seconds = atoi(optarg); break;
      case 'r': rate = atof(optarg); break;
      case 'n': count = atol(optarg), members_per_group = atoi(optarg); break;
      case 'f': file = optarg; break;
      case 'm': mib = atol(optarg); break;
      case 'c':
        if (topic_config_count == MAX_TOPIC_CONFIGS) fail("usage", "too many -c");
        topic_configs[topic_config_count++] = optarg;
        break;
      case 'd': drop = atol(optarg); break;
      case 'R': replication_factor = atoi(optarg); break;
      case 'T': topic_count = atoi(optarg); break;
      case 'a': acks = optarg; break;
      case 'x': dead_broker = atoi(optarg); break;
      case 'i': want_in_sync = 1; break;
      case 'z': zookeeper = optarg; break;
      case 'g': group_count = atoi(optarg); break;
      case 'X':
        if (client_setting_count == MAX_CLIENT_SETTINGS) fail("usage", "too many -X");
        client_settings[client_setting_count++] = optarg;
        break;
      default: return 2;
    }
  }
  if (!strcmp(cmd, "loopback")) return cmd_loopback();
  if (!strcmp(cmd, "pagecache-write")) return file ? cmd_pagecache_write() : 2;
  if (!strcmp(cmd, "controller")) {
    if (!zookeeper) fail("usage", "-z ZOOKEEPER is required");
    return cmd_controller();
  }
  if (!brokers) fail("usage", "-b BROKERS is required");
  if (!strcmp(cmd, "leaders")) return cmd_leaders();
  if (!strcmp(cmd, "ready")) return cmd_ready();
  if (!topic) fail("usage", "-t TOPIC is required");
  if (!strcmp(cmd, "create-topic")) return cmd_create_topic();
  if (!strcmp(cmd, "delete-topic")) return cmd_delete_topic();
  if (!strcmp(cmd, "paced-produce")) return cmd_paced_produce();
  if (!strcmp(cmd, "commit-load")) return cmd_commit_load();
  fail("usage", "unknown command");
  return 2;
}
