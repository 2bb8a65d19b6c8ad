// Section 7's light subscribers (#32): N WebSocket clients subscribed to newHeads, held in one C epoll loop,
// so that the spread measured is the server's fan-out rather than the subscribers' own reading (10,000 `ws`
// clients in one Node.js process take about as long to read a block as a server takes to send it, on the
// same two cores). Each socket does the real handshake and eth_subscribe; frames are read whole, answered
// (ping -> pong) and timestamped by the block number in them.
// `wsSubscribers N PORT PATH SECONDS` prints "ready" once all N are subscribed, then, a 1 s warm-up and
// SECONDS later, one JSON line: the blocks every socket got, and the spread from the first socket's arrival
// to the last (p50/p99).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cbench.h"

enum { BUF = 8192, TABLE = 4096, WARM_UP_MS = 1000 };

struct conn {
  int fd, len;
  unsigned char buf[BUF];
};

struct block {
  long number;
  double first, last;
  int count, ignored;
};

static struct block table[TABLE];
static const unsigned char MASK[4] = {0x12, 0x34, 0x56, 0x78};

/** A client frame (always masked): opcode and payload of at most 125 bytes. */
static void send_frame(int fd, int opcode, const unsigned char *payload, int len) {
  unsigned char frame[131];
  frame[0] = 0x80 | opcode;
  frame[1] = 0x80 | len;
  memcpy(frame + 2, MASK, 4);
  for (int i = 0; i < len; i++) frame[6 + i] = payload[i] ^ MASK[i % 4];
  if (write(fd, frame, 6 + len) != 6 + len) perror("write");
}

/** 1 if a whole frame starts the buffer: its opcode, header length and payload length. */
static int frame_at(const unsigned char *b, int len, int *op, int *head, long *payload) {
  if (len < 2) return 0;
  long pl = b[1] & 0x7f;
  int h = 2;
  if (pl == 126) {
    if (len < 4) return 0;
    pl = (b[2] << 8) | b[3], h = 4;
  } else if (pl == 127) {
    if (len < 10) return 0;
    pl = 0, h = 10;
    for (int i = 0; i < 8; i++) pl = (pl << 8) | b[2 + i];
  }
  if (b[1] & 0x80) h += 4;
  if (h + pl > BUF) return fprintf(stderr, "a frame of %ld bytes\n", pl), exit(1), 0;
  if (len < h + pl) return 0;
  *op = b[0] & 0x0f, *head = h, *payload = pl;
  return 1;
}

static void saw_block(long number, double t, double warm_until) {
  struct block *b = &table[number % TABLE];
  if (b->number != number || b->count == 0) *b = (struct block){number, t, t, 0, t < warm_until};
  b->last = t;
  b->count++;
}

/** Handles the whole frames in a socket's buffer; returns 1 once its subscription is confirmed. */
static int consume(struct conn *c, double warm_until) {
  int op, head, subscribed = 0;
  long pl;
  unsigned char *b = c->buf;
  int at = 0;
  while (frame_at(b + at, c->len - at, &op, &head, &pl)) {
    unsigned char *p = b + at + head;
    if (op == 9 && pl <= 125) send_frame(c->fd, 10, p, (int)pl);
    if (op == 1) {
      char *text = (char *)p, saved = text[pl];
      text[pl] = 0;
      char *number = strstr(text, "\"number\":\"0x");
      if (strstr(text, "eth_subscription") && number) saw_block(strtol(number + 12, NULL, 16), now_ms(), warm_until);
      else if (strstr(text, "\"result\"")) subscribed = 1;
      text[pl] = saved;
    }
    at += head + (int)pl;
  }
  memmove(b, b + at, c->len - at);
  c->len -= at;
  return subscribed;
}

int main(int argc, char **argv) {
  if (argc != 5) return fprintf(stderr, "usage: wsSubscribers N PORT PATH SECONDS\n"), 2;
  int n = atoi(argv[1]), port = atoi(argv[2]);
  const char *path = argv[3];
  double seconds = atof(argv[4]);
  struct conn *conns = calloc(n, sizeof *conns);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  char request[512];
  int request_len = snprintf(request, sizeof request,
                             "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                             path, port);
  const char *subscribe = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_subscribe\",\"params\":[\"newHeads\"]}";
  // One at a time, blocking: the handshake, then the subscription's answer (no notification comes before it).
  for (int i = 0; i < n; i++) {
    struct conn *c = &conns[i];
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(c->fd, (struct sockaddr *)&addr, sizeof addr)) return perror("connect"), 1;
    if (write(c->fd, request, request_len) != request_len) return perror("write"), 1;
    char *end = NULL;
    while (!end) {
      ssize_t got = read(c->fd, c->buf + c->len, BUF - 1 - c->len);
      if (got <= 0) return fprintf(stderr, "socket %d: no handshake answer\n", i), 1;
      c->len += got;
      c->buf[c->len] = 0;
      end = strstr((char *)c->buf, "\r\n\r\n");
    }
    if (strncmp((char *)c->buf, "HTTP/1.1 101", 12)) return fprintf(stderr, "socket %d: %.40s\n", i, c->buf), 1;
    int rest = c->len - (int)(end + 4 - (char *)c->buf);
    memmove(c->buf, end + 4, rest);
    c->len = rest;
    send_frame(c->fd, 1, (const unsigned char *)subscribe, (int)strlen(subscribe));
    while (!consume(c, 1e300)) {
      ssize_t got = read(c->fd, c->buf + c->len, BUF - c->len);
      if (got <= 0) return fprintf(stderr, "socket %d: no subscription answer\n", i), 1;
      c->len += got;
    }
  }
  int ep = epoll_create1(0);
  for (int i = 0; i < n; i++) {
    fcntl(conns[i].fd, F_SETFL, O_NONBLOCK);
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = &conns[i]};
    epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &e);
  }
  printf("ready\n");
  fflush(stdout);
  // Notifications that queued up while later sockets subscribed are read during the warm-up and not counted.
  double warm_until = now_ms() + WARM_UP_MS, end = warm_until + seconds * 1e3;
  struct epoll_event events[512];
  while (now_ms() < end) {
    int k = epoll_wait(ep, events, 512, 100);
    for (int j = 0; j < k; j++) {
      struct conn *c = events[j].data.ptr;
      ssize_t got = read(c->fd, c->buf + c->len, BUF - c->len);
      if (got <= 0) continue;
      c->len += got;
      consume(c, warm_until);
    }
  }
  static double spread[TABLE];
  int blocks = 0;
  for (int i = 0; i < TABLE; i++)
    if (table[i].count == n && !table[i].ignored) spread[blocks++] = table[i].last - table[i].first;
  if (blocks == 0) return fprintf(stderr, "no block reached every socket\n"), 1;
  printf("{\"blocks\":%d,\"spreadP50\":%.1f,\"spreadP99\":%.1f}\n", blocks, percentile(spread, blocks, 50), percentile(spread, blocks, 99));
  return 0;
}
