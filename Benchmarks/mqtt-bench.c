/* mqtt-bench: the backend and the broker's own subscriber of Benchmarks/push.py.
 *
 *   mqtt-bench pub --port P --topics FILE --rate R --count N [--size S] [--t0 T] [--t-step D]
 *                  [--qos Q] [--retain]
 *       Publishes N APNs-shaped updates at R per second, QoS 1 (or Q), round-robin over the
 *       topics in FILE (one per line), the n-th in all
 *       {"aps":{"timestamp":T0+n*D,"event":"update","content-state":{"seq":…,"t_ns":…,"pad":…}}}
 *       with the CLOCK_MONOTONIC send time and seq counting 0, 1, 2… on each topic (so that a
 *       subscriber of one sees no gaps), then one end marker (seq -1) per topic. D is 1 by
 *       default; a channel's messages need a T0 near now (a device applies none older than 8
 *       hours) and a small D (none more than 10 minutes ahead of its clock either).
 *   mqtt-bench sub --port P --topic T [--warmup N] [--timeout S] [--lat-out FILE] [--ready FILE]
 *       Subscribes at QoS 1 and measures each message as receive time minus t_ns, with the
 *       shared harness's statistics (the same percentiles as its vl-sub), until the end marker.
 *       FILE is created once the broker has acknowledged the subscription (its SUBACK).
 *
 * Both speak MQTT 3.1.1, which every broker here takes (NATS has no 3.1 and no 5).
 *
 * Built by push.py against the shared harness's common.c (clock, payload template, stats).
 */
#define _GNU_SOURCE
#include "common.h"

#include <getopt.h>
#include <mosquitto.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *host = "127.0.0.1";
static int port = 1883;

static struct sub_stats stats;
static volatile int done;

static void on_message(struct mosquitto *m, void *o, const struct mosquitto_message *msg) {
  (void)m;
  (void)o;
  uint64_t t = now_ns();
  if (sub_stats_feed(&stats, msg->payload, (size_t)msg->payloadlen, t)) done = 1;
}

static const char *ready_file;

static void on_connect(struct mosquitto *m, void *topic, int rc) {
  if (rc) die("connect refused: %d", rc);
  mosquitto_subscribe(m, NULL, topic, 1);
}

static void on_subscribe(struct mosquitto *m, void *o, int mid, int count, const int *granted) {
  (void)m;
  (void)o;
  (void)mid;
  if (count < 1 || granted[0] > 2) die("subscription refused");
  if (ready_file) {
    FILE *f = fopen(ready_file, "w");
    if (f) fclose(f);
  }
}

static struct mosquitto *client(void *context) {
  struct mosquitto *m = mosquitto_new(NULL, true, context);
  if (!m) die("mosquitto_new failed");
  mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1);
  return m;
}

static int sub(int argc, char **argv) {
  const char *topic = NULL, *lat_out = NULL;
  long warmup = 0;
  double timeout = 60;
  static const struct option lo[] = {{"port", 1, 0, 'p'}, {"topic", 1, 0, 't'}, {"warmup", 1, 0, 'W'},
                                     {"timeout", 1, 0, 'T'}, {"lat-out", 1, 0, 'o'}, {"ready", 1, 0, 'R'},
                                     {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "p:t:W:T:o:R:", lo, NULL)) != -1) {
    switch (c) {
    case 'p': port = atoi(optarg); break;
    case 't': topic = optarg; break;
    case 'W': warmup = atol(optarg); break;
    case 'T': timeout = atof(optarg); break;
    case 'o': lat_out = optarg; break;
    case 'R': ready_file = optarg; break;
    default: die("usage: mqtt-bench sub --port P --topic T [--warmup N] [--timeout S] [--lat-out F] [--ready F]");
    }
  }
  if (!topic) die("sub needs --topic");
  sub_stats_init(&stats, "seq", "t_ns", warmup);
  struct mosquitto *m = client((void *)topic);
  mosquitto_connect_callback_set(m, on_connect);
  mosquitto_subscribe_callback_set(m, on_subscribe);
  mosquitto_message_callback_set(m, on_message);
  if (mosquitto_connect(m, host, port, 60)) die("cannot connect to %s:%d", host, port);
  uint64_t end = now_ns() + (uint64_t)(timeout * 1e9);
  /* Waits for the network up to 5 s at a time (under the keepalive of 60 s): a subscriber
   * that woke every 50 ms to look at the clock woke, with the 49 others, 100 ms after each of
   * its messages — as the daemons' channel was published, half a period apart — and its
   * wake-ups ran inside every daemons' fan-out and in none of its own
   * (Benchmarks/critical-path.py). vl-sub, the daemons' presenter, wakes only for a message. */
  while (!done && now_ns() < end) {
    if (mosquitto_loop(m, 5000, 1) != MOSQ_ERR_SUCCESS) mosquitto_reconnect(m);
  }
  stats.timed_out = !done;
  sub_stats_report(&stats, lat_out, topic);
  mosquitto_destroy(m);
  return 0;
}

static int pub(int argc, char **argv) {
  const char *topics_file = NULL;
  double rate = 100, t0 = 1700000000, step = 1;
  long count = 1000, size = DEFAULT_SIZE;
  int qos = 1, retain = 0;
  static const struct option lo[] = {{"port", 1, 0, 'p'}, {"topics", 1, 0, 'f'}, {"rate", 1, 0, 'r'},
                                     {"count", 1, 0, 'n'}, {"size", 1, 0, 's'},   {"t0", 1, 0, '0'},
                                     {"t-step", 1, 0, 'd'}, {"qos", 1, 0, 'q'},  {"retain", 0, 0, 'k'},
                                     {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "p:f:r:n:s:0:d:q:k", lo, NULL)) != -1) {
    switch (c) {
    case 'p': port = atoi(optarg); break;
    case 'f': topics_file = optarg; break;
    case 'r': rate = atof(optarg); break;
    case 'n': count = atol(optarg); break;
    case 's': size = atol(optarg); break;
    case '0': t0 = atof(optarg); break;
    case 'd': step = atof(optarg); break;
    case 'q': qos = atoi(optarg); break;
    case 'k': retain = 1; break;
    default:
      die("usage: mqtt-bench pub --port P --topics FILE --rate R --count N [--size S] [--t0 T] [--t-step D] [--qos Q] "
          "[--retain]");
    }
  }
  if (!topics_file) die("pub needs --topics");
  char *topics[4096];
  int ntopics = 0;
  FILE *f = fopen(topics_file, "r");
  if (!f) die("cannot read %s", topics_file);
  char line[1024];
  while (ntopics < 4096 && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (*line) topics[ntopics++] = strdup(line);
  }
  fclose(f);
  if (!ntopics) die("no topics");

  /* The state is the harness's payload: seq, t_ns and filler. */
  const char *state = "{\"seq\":@SEQ@,\"t_ns\":@TS@,\"pad\":\"@PAD@\"}";
  struct tmpl t;
  tmpl_compile(&t, state, tmpl_pad_for(state, (size_t)size));
  struct mosquitto *m = client(NULL);
  mosquitto_max_inflight_messages_set(m, 0);
  if (mosquitto_connect(m, host, port, 60)) die("cannot connect to %s:%d", host, port);
  mosquitto_loop_start(m);
  tune_timer_slack();
  uint64_t period = rate > 0 ? (uint64_t)(1e9 / rate) : 0, start = now_ns();
  static char body[1 << 16], message[1 << 17];
  for (long seq = 0; seq <= count; seq++) {
    int end = seq == count;
    for (int i = 0; i < (end ? ntopics : 1); i++) {
      const char *topic = topics[end ? i : seq % ntopics];
      if (!end) sleep_until_ns(start + (uint64_t)seq * period);
      uint64_t ts = now_ns();
      size_t n = tmpl_expand(&t, body, sizeof body, end ? -1 : seq / ntopics, ts);
      int len = snprintf(message, sizeof message,
                         "{\"aps\":{\"timestamp\":%.3f,\"event\":\"update\",\"content-state\":%.*s}}",
                         t0 + (double)(end ? count + 1 : seq) * step, (int)n, body);
      if (mosquitto_publish(m, NULL, topic, len, message, qos, retain)) die("publish failed");
    }
  }
  /* Give the network thread time to hand everything to the broker. */
  usleep(500000);
  mosquitto_disconnect(m);
  mosquitto_loop_stop(m, false);
  printf("{\"role\":\"pub\",\"sent\":%ld,\"topics\":%d,\"seconds\":%.3f}\n", count, ntopics, (now_ns() - start) / 1e9);
  return 0;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  mosquitto_lib_init();
  if (argc < 2) die("usage: mqtt-bench pub|sub …");
  if (!strcmp(argv[1], "pub")) return pub(argc - 1, argv + 1);
  if (!strcmp(argv[1], "sub")) return sub(argc - 1, argv + 1);
  die("unknown mode %s", argv[1]);
}
