/* One all-reduce of an aggregation worker over a UDP socket (aggregation_socket.h). */
#define _GNU_SOURCE
#include "aggregation_socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "engine.h"

#define WAIT_MAX_NS 500000000LL /* wake at least every 0.5 s to check the call's deadline */
#define SEND_WAIT_MS 50         /* a full socket buffer: wait this long for room, then retry */

typedef struct {
    nw_agg_worker_t *w;
    int32_t fd;
    uint32_t packet_len, rx_cap;
    int64_t t0;
    struct sockaddr_in dst;
    struct mmsghdr tx_msg[NW_AGG_IO_BATCH];
    struct iovec tx_iov[NW_AGG_IO_BATCH];
    struct mmsghdr rx_msg[NW_AGG_IO_BATCH];
    struct iovec rx_iov[NW_AGG_IO_BATCH];
    uint8_t *rx_buf; /* NW_AGG_IO_BATCH * rx_cap */
    nw_agg_io_stats_t *stats;
} agg_loop_t;

int64_t nw_agg_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t loop_now(const agg_loop_t *l)
{
    return nw_agg_monotonic_ns() - l->t0;
}

/* ppoll on the socket for `events`, at most wait_ns: NW_OK (ready, or the time passed),
 * NW_AGG_INTERRUPTED (a signal), NW_ESYS. */
static int32_t wait_socket(agg_loop_t *l, int16_t events, int64_t wait_ns)
{
    struct pollfd pf = {.fd = l->fd, .events = events};
    struct timespec ts = {.tv_sec = wait_ns / 1000000000LL, .tv_nsec = wait_ns % 1000000000LL};
    int r = ppoll(&pf, 1, &ts, NULL);
    l->stats->waits++;
    if (r < 0)
        return errno == EINTR ? NW_AGG_INTERRUPTED : NW_ESYS;
    return NW_OK;
}

/* Sends queued[0..n) in one sendmmsg (several when the socket takes fewer). */
static int32_t send_batch(agg_loop_t *l, uint32_t first, uint32_t n)
{
    uint32_t done = 0;
    for (uint32_t i = 0; i < n; i++) {
        l->tx_iov[i].iov_base = (void *)nw_agg_tx_packet(l->w, first + i);
        l->tx_iov[i].iov_len = l->packet_len;
        memset(&l->tx_msg[i], 0, sizeof l->tx_msg[i]);
        l->tx_msg[i].msg_hdr.msg_name = &l->dst;
        l->tx_msg[i].msg_hdr.msg_namelen = sizeof l->dst;
        l->tx_msg[i].msg_hdr.msg_iov = &l->tx_iov[i];
        l->tx_msg[i].msg_hdr.msg_iovlen = 1;
    }
    while (done < n) {
        int r = sendmmsg(l->fd, l->tx_msg + done, n - done, MSG_DONTWAIT);
        l->stats->send_calls++;
        if (r > 0) {
            done += (uint32_t)r;
            l->stats->sent += (uint32_t)r;
        } else if (errno == EAGAIN || errno == ENOBUFS) {
            l->stats->send_retries++;
            if (wait_socket(l, POLLOUT, SEND_WAIT_MS * 1000000LL) < 0)
                return NW_ESYS; /* a signal here: send the rest first */
        } else if (errno != EINTR) {
            return NW_ESYS;
        }
    }
    return NW_OK;
}

/* Sends every packet the core queued, then empties its queue. */
static int32_t flush(agg_loop_t *l)
{
    uint32_t count = nw_agg_tx_count(l->w);
    for (uint32_t first = 0; first < count; first += NW_AGG_IO_BATCH) {
        uint32_t n = count - first < NW_AGG_IO_BATCH ? count - first : NW_AGG_IO_BATCH;
        int32_t rc = send_batch(l, first, n);
        if (rc < 0)
            return rc;
    }
    nw_agg_tx_clear(l->w);
    return NW_OK;
}

static void arm_receives(agg_loop_t *l)
{
    for (uint32_t i = 0; i < NW_AGG_IO_BATCH; i++) {
        l->rx_iov[i].iov_base = l->rx_buf + (uint64_t)i * l->rx_cap;
        l->rx_iov[i].iov_len = l->rx_cap;
        memset(&l->rx_msg[i], 0, sizeof l->rx_msg[i]);
        l->rx_msg[i].msg_hdr.msg_iov = &l->rx_iov[i];
        l->rx_msg[i].msg_hdr.msg_iovlen = 1;
    }
}

/* Reads one batch of waiting datagrams into the core; the number read (0: none). */
static int32_t receive_batch(agg_loop_t *l)
{
    int n = recvmmsg(l->fd, l->rx_msg, NW_AGG_IO_BATCH, MSG_DONTWAIT, NULL);
    int64_t now;
    l->stats->recv_calls++;
    if (n < 0)
        return (errno == EAGAIN || errno == EINTR) ? 0 : NW_ESYS;
    now = loop_now(l);
    for (int i = 0; i < n; i++) {
        uint32_t len = l->rx_msg[i].msg_len;
        int32_t rc = nw_agg_on_payload(l->w, l->rx_iov[i].iov_base,
                                       len < l->rx_cap ? len : l->rx_cap, now);
        if (rc < 0)
            return rc;
    }
    l->stats->received += (uint32_t)n;
    return n;
}

/* One turn: results waiting, else timers due, else wait for either (NW_AGG_INTERRUPTED
 * when a signal cut the wait short). */
static int32_t step(agg_loop_t *l)
{
    int32_t got = receive_batch(l);
    int64_t due, now;
    if (got != 0)
        return got < 0 ? got : flush(l);
    due = nw_agg_next_deadline(l->w);
    now = loop_now(l);
    if (due >= 0 && now >= due) {
        int32_t rc = nw_agg_on_time(l->w, now);
        return rc < 0 ? rc : flush(l);
    }
    return wait_socket(l, POLLIN, due < 0 || due - now > WAIT_MAX_NS ? WAIT_MAX_NS : due - now);
}

static int32_t run(agg_loop_t *l, int64_t deadline_ns)
{
    int32_t rc = NW_OK;
    if (!nw_agg_started(l->w)) {
        rc = nw_agg_start(l->w, loop_now(l));
        if (rc >= 0)
            rc = flush(l);
    }
    while (rc >= 0 && rc != NW_AGG_INTERRUPTED && nw_agg_state(l->w) == NW_AGG_RUNNING) {
        if (deadline_ns > 0 && nw_agg_monotonic_ns() > deadline_ns)
            return NW_ETIMEDOUT;
        rc = step(l);
    }
    if (rc == NW_AGG_INTERRUPTED && nw_agg_state(l->w) == NW_AGG_RUNNING)
        return rc;
    return rc < 0 ? rc : nw_agg_state(l->w);
}

int32_t nw_agg_run_socket(nw_agg_worker_t *w, int32_t fd, uint32_t dst_ip, uint16_t dst_port,
                          int64_t t0_ns, int64_t deadline_ns, nw_agg_io_stats_t *stats)
{
    agg_loop_t *l;
    int32_t rc;
    if (!w || fd < 0 || !stats)
        return NW_EINVAL;
    l = calloc(1, sizeof *l);
    if (!l)
        return NW_ENOMEM;
    l->w = w;
    l->fd = fd;
    l->stats = stats;
    l->packet_len = nw_agg_packet_len(w);
    l->rx_cap = l->packet_len + 64u; /* longer datagrams are read truncated: the core
                                        reads packet_len bytes, as codec.py does */
    l->rx_buf = malloc((uint64_t)NW_AGG_IO_BATCH * l->rx_cap);
    if (!l->rx_buf) {
        free(l);
        return NW_ENOMEM;
    }
    l->dst.sin_family = AF_INET;
    l->dst.sin_addr.s_addr = htonl(dst_ip);
    l->dst.sin_port = htons(dst_port);
    arm_receives(l);
    l->t0 = t0_ns;
    rc = run(l, deadline_ns);
    free(l->rx_buf);
    free(l);
    return rc;
}
