// The machine's floor for section 7 (#32): one 1,751-byte message (the gateway's newHeads notification of an
// anvil block, 1,747 bytes, in its 4-byte frame header; until 2026-11-26 it was 800 bytes) written to
// each of N loopback TCP sockets per block interval, in C, with nothing else: no WebSocket framing, no JSON, no
// event loop. `server N THREADS INTERVAL_MS ROUNDS` accepts N connections (it prints its port first) and splits
// the writes over THREADS threads; `client N PORT ROUNDS` holds the N sockets in one epoll loop that reads and
// timestamps. The client prints, per round, the spread from the first socket's arrival to the last and the time
// from the server starting the round to the last arrival (p50/p99, one JSON line). No server written in any
// language does the same writes in less on this machine: the kernel's loopback send is the cost.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cbench.h"

enum { MESSAGE = 1751, MAX_ROUNDS = 256, MAX_THREADS = 16 };

struct share {
  const int *fds;
  int from, to;
  const char *message;
};

static void *write_share(void *arg) {
  const struct share *s = arg;
  for (int i = s->from; i < s->to; i++)
    if (write(s->fds[i], s->message, MESSAGE) != MESSAGE) perror("write");
  return NULL;
}

static int server(int n, int threads, double interval_ms, int rounds) {
  int one = 1, listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  if (bind(listener, (struct sockaddr *)&addr, sizeof addr) || listen(listener, 4096)) return perror("listen"), 1;
  getsockname(listener, (struct sockaddr *)&addr, &len);
  printf("port %d\n", ntohs(addr.sin_port));
  fflush(stdout);
  int *fds = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++) {
    fds[i] = accept(listener, NULL, NULL);
    setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as ws and Node set it
  }
  char message[MESSAGE];
  memset(message, 'x', sizeof message);
  usleep(500 * 1000);
  for (int r = 0; r < rounds; r++) {
    double start = now_ms();
    memcpy(message, &r, sizeof r);
    memcpy(message + 8, &start, sizeof start);
    pthread_t tid[MAX_THREADS];
    struct share shares[MAX_THREADS];
    for (int t = 0; t < threads; t++) {
      shares[t] = (struct share){fds, n * t / threads, n * (t + 1) / threads, message};
      pthread_create(&tid[t], NULL, write_share, &shares[t]);
    }
    for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
    while (now_ms() < start + interval_ms) usleep(1000);
  }
  return 0;
}

static int client(int n, int port, int rounds) {
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int ep = epoll_create1(0);
  for (int i = 0; i < n; i++) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, (struct sockaddr *)&addr, sizeof addr)) return perror("connect"), 1;
    fcntl(s, F_SETFL, O_NONBLOCK);
    struct epoll_event e = {.events = EPOLLIN, .data.fd = s};
    epoll_ctl(ep, EPOLL_CTL_ADD, s, &e);
  }
  static double first[MAX_ROUNDS], last[MAX_ROUNDS], started[MAX_ROUNDS];
  static int arrived[MAX_ROUNDS];
  struct epoll_event events[512];
  char buf[MESSAGE * 4];
  long done = 0;
  while (done < (long)n * rounds) {
    int k = epoll_wait(ep, events, 512, 10 * 1000);
    if (k <= 0) break;
    for (int j = 0; j < k; j++) {
      // Loopback hands over each write whole, and the rounds are an interval apart.
      ssize_t got = read(events[j].data.fd, buf, sizeof buf);
      if (got <= 0) {  // the server went away: stop watching this socket
        epoll_ctl(ep, EPOLL_CTL_DEL, events[j].data.fd, NULL);
        continue;
      }
      for (ssize_t at = 0; at + MESSAGE <= got; at += MESSAGE) {
        int r;
        double start, t = now_ms();
        memcpy(&r, buf + at, sizeof r);
        memcpy(&start, buf + at + 8, sizeof start);
        if (arrived[r]++ == 0) first[r] = t, started[r] = start;
        last[r] = t;
        done++;
      }
    }
  }
  double spread[MAX_ROUNDS], total[MAX_ROUNDS];
  int complete = 0;
  for (int r = 0; r < rounds; r++)
    if (arrived[r] == n) spread[complete] = last[r] - first[r], total[complete++] = last[r] - started[r];
  if (complete == 0) return fprintf(stderr, "no complete round\n"), 1;
  printf("{\"rounds\":%d,\"spreadP50\":%.1f,\"spreadP99\":%.1f,\"totalP50\":%.1f,\"totalP99\":%.1f}\n", complete,
         percentile(spread, complete, 50), percentile(spread, complete, 99), percentile(total, complete, 50),
         percentile(total, complete, 99));
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 6 && !strcmp(argv[1], "server")) {
    int threads = atoi(argv[3]), rounds = atoi(argv[5]);
    if (threads < 1 || threads > MAX_THREADS || rounds < 1 || rounds > MAX_ROUNDS) return 2;
    return server(atoi(argv[2]), threads, atof(argv[4]), rounds);
  }
  if (argc == 5 && !strcmp(argv[1], "client")) {
    int rounds = atoi(argv[4]);
    if (rounds < 1 || rounds > MAX_ROUNDS) return 2;
    return client(atoi(argv[2]), atoi(argv[3]), rounds);
  }
  fprintf(stderr, "usage: fanoutFloor server N THREADS INTERVAL_MS ROUNDS | client N PORT ROUNDS\n");
  return 2;
}
