/* I/O driver: one pthread runs an engine over UDP sockets.
 *
 * A pass (io_step): recvmmsg (split UDP GRO super-packets) -> nw_input;
 * timers -> nw_on_time; nw_output into a batch -> sendmmsg (runs of
 * equal-size packets to one destination go out as one UDP GSO message);
 * completions -> eventfd. The engine lock (mu) is held while the engine runs,
 * never during a system call that may block; the drive lock (drive_mu) is
 * held by whichever thread runs a pass, since the batches are shared.
 *
 * Passes run on the driver's thread, and with NW_IO_INLINE also on the
 * application's: a post transmits at once, and nw_io_wait_cq receives on the
 * rx socket itself, so one message in flight costs no thread hand-off. The
 * thread then sleeps on a timerfd that inline passes re-arm when they add an
 * earlier deadline; it still polls the rx socket (whichever thread takes the
 * drive lock first receives: measured here, that beat parking the thread's
 * poll while an application thread waits).
 * NW_IO_BUSY_POLL spins (thread and waiter) for busy_poll_us after the last
 * activity before sleeping.
 *
 * NW_IO_TX_PACKET moves packets through AF_PACKET rings (packet_ring.h): the
 * engine writes each packet straight into a transmit ring frame, behind the
 * headers the ring writes, and reads payloads in place from the receive ring;
 * rx_fd stays open for packets to peers whose MAC is not known yet and for
 * datagrams that reach it on other interfaces. */
#define _GNU_SOURCE
#include "io_driver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "engine_state.h"
#include "packet_ring.h"
#include "udp_frame.h"
#include "wire_model.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define IO_RX_BUF 65536u /* room for a GRO super-packet */
#define IO_IP_UDP_HDR NW_IP_UDP_HLEN
#define IO_GSO_MAX_SEGS 64u
#define IO_GSO_MAX_BYTES 65000u
#define IO_RX_DRAIN_BATCHES 16u /* receive batches read before timers run */
#define IO_RING_SOCKET_EVERY 64u /* tx=packet: passes between looks at rx_fd */
#define IO_RING_TX_MAX_BYTES (8u << 20)

struct nw_io {
    nw_engine_t *e;
    nw_io_config_t cfg;
    pthread_t thread;
    pthread_mutex_t mu;       /* the engine */
    pthread_mutex_t drive_mu; /* the batches below: held for a whole pass */
    int wake_fd, cq_fd, raw_fd, timer_fd;
    uint64_t armed;           /* NW_IO_INLINE: deadline the sleeping thread's timerfd holds
                                 (UINT64_MAX: none); under mu */
    atomic_int awake;         /* the thread runs or spins: a kick needs no eventfd write */
    atomic_int kicked;        /* a kick came while it was awake */
    uint64_t busy_ns;
    int *port_fds;
    uint32_t nports;
    nw_pring_t *ring;         /* NW_IO_TX_PACKET */
    uint32_t ring_passes;     /* passes since rx_fd was last read */
    int udp_ready;            /* a poll saw rx_fd readable */
    int ring_blocked;         /* the last pass found no free transmit frame */
    volatile int stop;
    int32_t last_errno;
    int cq_signalled;
    int gro;
    uint32_t mtu;
    nw_link_t *drop_link;     /* loss injection: the wire model with loss alone */
    nw_io_stats_t st;
    /* receive batch */
    uint8_t *rx_buf;
    struct mmsghdr *rx_msg;
    struct iovec *rx_iov;
    struct sockaddr_in *rx_addr;
    uint8_t *rx_ctl;
    /* transmit batch: packet i at tx_buf + i * tx_stride (+28 for raw headers) */
    uint8_t *tx_buf;
    uint32_t tx_stride;
    uint32_t *tx_len;
    nw_dest_t *tx_dst;
    struct mmsghdr *tx_msg;
    struct iovec *tx_iov;
    uint32_t *tx_order;
    struct sockaddr_in *tx_addr;
    uint8_t *tx_ctl;
};

#define CTL_SPACE 64u

void nw_io_config_default(nw_io_config_t *c)
{
    memset(c, 0, sizeof(*c));
    c->rx_fd = -1;
    c->tx_mode = NW_IO_TX_SOCKET;
    c->flags = NW_IO_GSO;
    c->batch = 64;
    c->sndbuf = 16u << 20;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------- sockets */

/* Socket buffers: the FORCE variants (root) pass net.core.[rw]mem_max. */
static void set_bufs(int fd, uint32_t bytes, int rcv)
{
    int v = (int)bytes;
    if (!bytes)
        return;
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) < 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
    if (rcv && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
}

/* The receive socket's own port if it lies in the entropy range on our
 * address (an ephemeral port can land there), else -1. */
static int32_t rx_port_index(const nw_io_t *io)
{
    const nw_config_t *c = &io->e->cfg;
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    if (getsockname(io->cfg.rx_fd, (struct sockaddr *)&a, &alen) < 0 || a.sin_family != AF_INET)
        return -1;
    uint32_t rx_ip = ntohl(a.sin_addr.s_addr);
    if (rx_ip != 0 && io->cfg.local_ip != 0 && rx_ip != io->cfg.local_ip)
        return -1;
    uint32_t i = (uint32_t)ntohs(a.sin_port) - c->entropy_base;
    return i < c->entropy_count ? (int32_t)i : -1;
}

/* ECN on sockets (docs/congestion.md): data of ECN-using modes leaves ECT(0);
 * the TOS byte is per socket, so their other packets carry it too. */
static void set_tos(nw_io_t *io, int fd)
{
    uint32_t m = io->e->cfg.cc_mode;
    int tos = (m == NW_CC_MODE_NSCC || m == NW_CC_MODE_NSCC_RCCC || m == NW_CC_MODE_DCQCN)
                  ? NW_ECN_ECT0
                  : 0;
    if (tos)
        setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
}

static int open_port_sockets(nw_io_t *io)
{
    const nw_config_t *c = &io->e->cfg;
    io->nports = c->entropy_count;
    io->port_fds = malloc(io->nports * sizeof(int));
    if (!io->port_fds)
        return NW_ENOMEM;
    for (uint32_t i = 0; i < io->nports; i++)
        io->port_fds[i] = -1;
    int32_t own = rx_port_index(io);
    for (uint32_t i = 0; i < io->nports; i++) {
        if ((int32_t)i == own) {
            io->port_fds[i] = io->cfg.rx_fd; /* already bound there: send from it */
            continue;
        }
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return NW_ESYS;
        /* Entropy sockets only send, so engines on one address (a perf server
         * and client on 127.0.0.1) may share them. */
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)(c->entropy_base + i)),
                                .sin_addr.s_addr = htonl(io->cfg.local_ip)};
        if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
            int saved = errno;
            close(fd);
            if (saved != EADDRINUSE) {
                errno = saved;
                return NW_ESYS;
            }
            /* Held by a socket that does not share (another program, or another
             * user's engine): that entropy value leaves from the listen port. */
            io->port_fds[i] = io->cfg.rx_fd;
            continue;
        }
        io->port_fds[i] = fd;
        set_bufs(fd, io->cfg.sndbuf, 0);
        set_tos(io, fd);
    }
    return NW_OK;
}

/* The interface that holds ip (host order): the one with that address, else a
 * loopback interface whose subnet holds it (all of 127/8 is lo's); 0 if none. */
static uint32_t ifindex_of(uint32_t ip)
{
    struct ifaddrs *all;
    uint32_t exact = 0, loop = 0;
    if (getifaddrs(&all) < 0)
        return 0;
    for (struct ifaddrs *a = all; a && !exact; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET)
            continue;
        uint32_t addr = ntohl(((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr);
        uint32_t mask = a->ifa_netmask
                            ? ntohl(((struct sockaddr_in *)a->ifa_netmask)->sin_addr.s_addr)
                            : 0xffffffffu;
        if (addr == ip)
            exact = if_nametoindex(a->ifa_name);
        else if ((a->ifa_flags & IFF_LOOPBACK) && ((addr ^ ip) & mask) == 0 && !loop)
            loop = if_nametoindex(a->ifa_name);
    }
    freeifaddrs(all);
    return exact ? exact : loop;
}

static int32_t open_ring(nw_io_t *io)
{
    const nw_config_t *c = &io->e->cfg;
    uint32_t ip = io->cfg.local_ip ? io->cfg.local_ip : c->local_ip;
    uint32_t ifindex = io->cfg.ifindex ? io->cfg.ifindex : ifindex_of(ip);
    if (ip == 0 || ifindex == 0) {
        errno = EADDRNOTAVAIL; /* tx=packet needs a specific local address on an interface */
        return NW_EINVAL;
    }
    uint32_t sz = io->cfg.sndbuf ? io->cfg.sndbuf : (16u << 20);
    nw_pring_config_t rc = {.ifindex = ifindex, .local_ip = ip, .local_port = c->local_port,
                            .max_payload = c->mtu, .rx_bytes = sz,
                            .tx_bytes = sz < IO_RING_TX_MAX_BYTES ? sz : IO_RING_TX_MAX_BYTES};
    int32_t err;
    io->ring = nw_pring_open(&rc, &err);
    return io->ring ? NW_OK : err;
}

static int32_t open_sockets(nw_io_t *io)
{
    int fd = io->cfg.rx_fd;
    set_bufs(fd, io->cfg.sndbuf, 1);
    int one = 1;
    setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)); /* CE marks reach the engine */
    set_tos(io, fd);
    if (io->cfg.flags & NW_IO_GRO) {
        int one = 1;
        io->gro = setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) == 0;
    }
    if (io->cfg.tx_mode == NW_IO_TX_RAW) {
        io->raw_fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
        if (io->raw_fd < 0)
            return errno == EPERM || errno == EACCES ? NW_EPERM : NW_ESYS;
        set_bufs(io->raw_fd, io->cfg.sndbuf, 0);
        return NW_OK;
    }
    if (io->cfg.tx_mode == NW_IO_TX_PORTS)
        return open_port_sockets(io);
    if (io->cfg.tx_mode == NW_IO_TX_PACKET)
        return open_ring(io);
    return NW_OK;
}

static void close_sockets(nw_io_t *io)
{
    nw_pring_close(io->ring);
    io->ring = NULL;
    if (io->raw_fd >= 0)
        close(io->raw_fd);
    for (uint32_t i = 0; io->port_fds && i < io->nports; i++)
        if (io->port_fds[i] >= 0 && io->port_fds[i] != io->cfg.rx_fd)
            close(io->port_fds[i]);
    free(io->port_fds);
    io->port_fds = NULL;
}

/* ------------------------------------------------------------- receive */

static uint32_t gro_size(struct msghdr *m)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c))
        if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO &&
            c->cmsg_len >= CMSG_LEN(sizeof(int))) {
            int v;
            memcpy(&v, CMSG_DATA(c), sizeof(v));
            return v > 0 ? (uint32_t)v : 0;
        }
    return 0;
}

/* Loss injection: 1 if this datagram is to be dropped. The draw is the one wire
 * model's Bernoulli loss (link/wire_model.c), so a seed drops the datagrams a
 * simulated or emulated wire with that loss and seed would. */
static int injected_drop(nw_io_t *io, uint32_t len)
{
    nw_link_result_t res;
    if (io->drop_link == NULL || nw_link_propagate(io->drop_link, 0, len, &res) == NW_LINK_DELIVER)
        return 0;
    io->st.injected_drops++;
    return 1;
}

/* The ECN codepoint of a received datagram (IP_RECVTOS), 0 if absent. */
static uint8_t ecn_of(struct msghdr *m)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c))
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
            c->cmsg_len >= CMSG_LEN(1))
            return (uint8_t)(CMSG_DATA(c)[0] & 3);
    return 0;
}

static void deliver(nw_io_t *io, const uint8_t *p, uint32_t len, uint32_t ip, uint16_t port,
                    uint8_t ecn, uint64_t now)
{
    io->st.recv_pkts++;
    if (!injected_drop(io, len))
        nw_input_ecn(io->e, p, len, ip, port, ecn, now);
}

static int socket_receive(nw_io_t *io, uint64_t now)
{
    uint32_t b = io->cfg.batch;
    for (uint32_t i = 0; i < b; i++) {
        io->rx_iov[i].iov_base = io->rx_buf + (size_t)i * IO_RX_BUF;
        io->rx_iov[i].iov_len = IO_RX_BUF;
        struct msghdr *m = &io->rx_msg[i].msg_hdr;
        m->msg_name = &io->rx_addr[i];
        m->msg_namelen = sizeof(io->rx_addr[i]);
        m->msg_iov = &io->rx_iov[i];
        m->msg_iovlen = 1;
        m->msg_control = io->rx_ctl + (size_t)i * CTL_SPACE; /* GRO size, TOS */
        m->msg_controllen = CTL_SPACE;
        m->msg_flags = 0;
    }
    int n = recvmmsg(io->cfg.rx_fd, io->rx_msg, b, MSG_DONTWAIT, NULL);
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            io->st.recv_errors++;
            io->last_errno = errno;
        }
        return 0;
    }
    io->st.recv_calls++;
    for (int i = 0; i < n; i++) {
        uint32_t len = io->rx_msg[i].msg_len;
        uint32_t ip = ntohl(io->rx_addr[i].sin_addr.s_addr);
        uint16_t port = ntohs(io->rx_addr[i].sin_port);
        const uint8_t *p = io->rx_buf + (size_t)i * IO_RX_BUF;
        uint32_t seg = io->gro ? gro_size(&io->rx_msg[i].msg_hdr) : 0;
        uint8_t ecn = ecn_of(&io->rx_msg[i].msg_hdr); /* GRO merges only equal TOS */
        if (seg == 0 || seg >= len) {
            deliver(io, p, len, ip, port, ecn, now);
            continue;
        }
        for (uint32_t off = 0; off < len; off += seg) {
            uint32_t l = len - off < seg ? len - off : seg;
            deliver(io, p + off, l, ip, port, ecn, now);
            io->st.gro_segments++;
        }
    }
    return n;
}

/* Frames waiting in the receive ring, read in place. */
static int ring_receive(nw_io_t *io, uint64_t now)
{
    nw_frame_t fr;
    const uint8_t *payload;
    int n = 0;
    while (n < (int)io->cfg.batch && nw_pring_rx_next(io->ring, &fr, &payload) == 1) {
        deliver(io, payload, fr.payload_len, fr.addr.src_ip, fr.addr.src_port, fr.addr.ecn, now);
        nw_pring_rx_release(io->ring);
        n++;
    }
    return n;
}

/* One receive batch. With rings, rx_fd (which rarely has anything) is read
 * when a poll saw it readable and every IO_RING_SOCKET_EVERY passes. */
static int io_receive(nw_io_t *io, uint64_t now)
{
    if (!io->ring)
        return socket_receive(io, now);
    int n = ring_receive(io, now);
    if (io->udp_ready || ++io->ring_passes >= IO_RING_SOCKET_EVERY) {
        io->udp_ready = 0;
        io->ring_passes = 0;
        n += socket_receive(io, now);
    }
    return n;
}

/* ------------------------------------------------------------- transmit */

/* tx=raw: IPv4 + UDP headers in front of the payload. The UDP checksum needs
 * the source address; without one the kernel picks it and the checksum stays 0
 * (allowed in IPv4). */
static void raw_headers(nw_io_t *io, uint8_t *h, uint32_t plen, const nw_dest_t *d)
{
    nw_udp_addr_t a = {.src_ip = io->cfg.local_ip ? io->cfg.local_ip : io->e->cfg.local_ip,
                       .dst_ip = d->ip, .src_port = d->src_port, .dst_port = d->port,
                       .ecn = d->ecn};
    nw_ipv4_udp_write(h, plen, &a, a.src_ip ? NW_UDP_CSUM_FULL : NW_UDP_CSUM_NONE);
}

static int same_flow(const nw_io_t *io, const nw_dest_t *a, const nw_dest_t *b)
{
    /* From one socket (NW_IO_TX_SOCKET) the entropy value does not reach the wire. */
    int port_matters = io->cfg.tx_mode == NW_IO_TX_PORTS || io->cfg.tx_mode == NW_IO_TX_RAW;
    return a->ip == b->ip && a->port == b->port &&
           (!port_matters || a->src_port == b->src_port);
}

static int send_fd_for(nw_io_t *io, const nw_dest_t *d)
{
    if (io->cfg.tx_mode == NW_IO_TX_RAW)
        return io->raw_fd;
    if (io->cfg.tx_mode == NW_IO_TX_PORTS) {
        uint32_t i = (uint32_t)(d->src_port - io->e->cfg.entropy_base);
        return i < io->nports ? io->port_fds[i] : io->cfg.rx_fd;
    }
    return io->cfg.rx_fd;
}

static void flush_msgs(nw_io_t *io, int fd, uint32_t nmsg)
{
    uint32_t done = 0;
    while (done < nmsg) {
        int r = sendmmsg(fd, io->tx_msg + done, nmsg - done, 0);
        io->st.send_calls++;
        if (r < 0) {
            if (errno == EINTR)
                continue;
            io->st.send_errors++;
            io->last_errno = errno;
            return; /* dropped: the engine's loss recovery resends */
        }
        done += (uint32_t)r;
    }
}

/* Sends packets [0, count) of the batch. Runs of equal-size packets of one
 * flow become one message with UDP_SEGMENT (the iovec is a byte stream to
 * GSO, so the packets need not be contiguous); the last of a run may be
 * shorter. Messages for one socket go out in one sendmmsg. */
static void io_transmit(nw_io_t *io, uint32_t count)
{
    int raw = io->cfg.tx_mode == NW_IO_TX_RAW;
    int gso = (io->cfg.flags & NW_IO_GSO) && !raw;
    uint32_t *order = io->tx_order; /* send order = engine order (PSN order per PDC) */
    for (uint32_t i = 0; i < count; i++)
        order[i] = i;
    uint32_t nmsg = 0, niov = 0;
    int cur_fd = -1;
    for (uint32_t k = 0; k < count;) {
        uint32_t i = order[k];
        const nw_dest_t *d = &io->tx_dst[i];
        int fd = send_fd_for(io, d);
        if (fd != cur_fd && nmsg) {
            flush_msgs(io, cur_fd, nmsg);
            nmsg = niov = 0;
        }
        cur_fd = fd;
        uint32_t len = io->tx_len[i];
        uint8_t *base = io->tx_buf + (size_t)i * io->tx_stride;
        if (raw) {
            raw_headers(io, base, len, d);
            len += IO_IP_UDP_HDR;
        }
        struct iovec *iov = &io->tx_iov[niov];
        iov[0].iov_base = base;
        iov[0].iov_len = len;
        uint32_t segs = 1, bytes = len;
        if (gso) {
            while (k + segs < count && segs < IO_GSO_MAX_SEGS) {
                uint32_t j = order[k + segs];
                uint32_t l = io->tx_len[j];
                if (!same_flow(io, d, &io->tx_dst[j]) || send_fd_for(io, &io->tx_dst[j]) != fd ||
                    l > len || bytes + l > IO_GSO_MAX_BYTES || io->tx_len[order[k + segs - 1]] != len)
                    break;
                iov[segs].iov_base = io->tx_buf + (size_t)j * io->tx_stride;
                iov[segs].iov_len = l;
                bytes += l;
                segs++;
            }
        }
        struct sockaddr_in *a = &io->tx_addr[nmsg];
        a->sin_family = AF_INET;
        a->sin_port = htons(raw ? 0 : d->port);
        a->sin_addr.s_addr = htonl(d->ip);
        struct msghdr *m = &io->tx_msg[nmsg].msg_hdr;
        memset(m, 0, sizeof(*m));
        m->msg_name = a;
        m->msg_namelen = sizeof(*a);
        m->msg_iov = iov;
        m->msg_iovlen = segs;
        if (segs > 1) {
            uint8_t *ctl = io->tx_ctl + (size_t)nmsg * CTL_SPACE;
            memset(ctl, 0, CTL_SPACE);
            m->msg_control = ctl;
            m->msg_controllen = CMSG_SPACE(sizeof(uint16_t));
            struct cmsghdr *c = CMSG_FIRSTHDR(m);
            c->cmsg_level = IPPROTO_UDP; /* SOL_UDP */
            c->cmsg_type = UDP_SEGMENT;
            c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
            uint16_t gs = (uint16_t)len;
            memcpy(CMSG_DATA(c), &gs, sizeof(gs));
            io->st.gso_sends++;
        }
        nmsg++;
        niov += segs;
        io->st.send_pkts += segs;
        k += segs;
    }
    if (nmsg)
        flush_msgs(io, cur_fd, nmsg);
}

/* ------------------------------------------------------------- thread */

static void signal_completions(nw_io_t *io)
{
    if (io->e->cq.count > 0 && !io->cq_signalled) {
        uint64_t one = 1;
        if (write(io->cq_fd, &one, sizeof(one)) == sizeof(one))
            io->cq_signalled = 1;
    }
}

/* Re-arms the sleeping thread's timerfd if the engine's next deadline moved
 * earlier (an inline pass posted new work). Caller holds mu. */
static void rearm_timer(nw_io_t *io)
{
    uint64_t d = nw_next_deadline(io->e);
    if (io->timer_fd < 0 || d >= io->armed)
        return;
    struct itimerspec its = {0};
    uint64_t at = d ? d : 1; /* 0 would disarm */
    its.it_value.tv_sec = (time_t)(at / 1000000000ull);
    its.it_value.tv_nsec = (long)(at % 1000000000ull);
    if (timerfd_settime(io->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        io->last_errno = errno;
    io->armed = d;
}

/* tx=packet: the engine writes each packet into the next free transmit frame;
 * packets for peers without a known MAC move to the socket batch instead.
 * Caller holds mu. */
static void ring_output(nw_io_t *io, uint64_t now, uint32_t *nring, uint32_t *nsock)
{
    io->ring_blocked = 0;
    while (*nring + *nsock < io->cfg.batch) {
        uint8_t *frame = nw_pring_tx_payload(io->ring, *nring);
        if (!frame) {
            io->ring_blocked = nw_has_output(io->e);
            return;
        }
        nw_dest_t d;
        int32_t n = nw_output(io->e, frame, io->mtu, &d, now);
        if (n <= 0)
            return;
        if (nw_pring_tx_fill(io->ring, *nring, (uint32_t)n, &d)) {
            (*nring)++;
            continue;
        }
        memcpy(io->tx_buf + (size_t)*nsock * io->tx_stride, frame, (size_t)n);
        io->tx_len[*nsock] = (uint32_t)n;
        io->tx_dst[*nsock] = d;
        (*nsock)++;
    }
}

#define STEP_RX 0x1     /* receive before running the engine */
#define STEP_INLINE 0x2 /* run by an application thread, not the driver's */
#define STEP_WAITER 0x4 /* ... by the waiter that will poll the CQ itself */

/* One pass: receive, timers, output, transmit. Caller holds drive_mu.
 * Returns 1 if there is more to do at once; *nrx_out counts receive batches. */
static int io_step(nw_io_t *io, uint32_t how, int *nrx_out)
{
    uint32_t off = io->cfg.tx_mode == NW_IO_TX_RAW ? IO_IP_UDP_HDR : 0;
    pthread_mutex_lock(&io->mu);
    uint64_t now = mono_ns();
    /* Read what is waiting before running timers: after the thread was
     * descheduled, ACKs sitting in the socket would otherwise arrive only
     * after their RTO fired (a spurious retransmission). */
    int nrx = 0;
    for (uint32_t k = 0; (how & STEP_RX) && k < IO_RX_DRAIN_BATCHES; k++) {
        int n = io_receive(io, now);
        nrx += n;
        if (n < (int)io->cfg.batch)
            break;
    }
    if (nw_next_deadline(io->e) <= now)
        nw_on_time(io->e, now);
    uint32_t count = 0, nring = 0;
    if (io->ring)
        ring_output(io, now, &nring, &count);
    while (!io->ring && count < io->cfg.batch) {
        uint8_t *slot = io->tx_buf + (size_t)count * io->tx_stride;
        int32_t n = nw_output(io->e, slot + off, io->mtu, &io->tx_dst[count], now);
        if (n <= 0)
            break;
        io->tx_len[count++] = (uint32_t)n;
    }
    if (!(how & STEP_WAITER))
        signal_completions(io);
    if (how & STEP_INLINE) {
        io->st.inline_steps++;
        rearm_timer(io);
    }
    int more = nw_has_output(io->e);
    pthread_mutex_unlock(&io->mu);
    if (nring) {
        if (nw_pring_tx_commit(io->ring, nring) != NW_OK) {
            io->st.send_errors++;
            io->last_errno = errno;
        }
        io->st.send_calls++;
        io->st.send_pkts += nring;
    }
    if (count)
        io_transmit(io, count);
    if (nrx_out)
        *nrx_out = nrx;
    uint32_t sent = count + nring;
    return nrx > 0 || sent == io->cfg.batch || (more && sent > 0);
}

static void to_timespec(uint64_t ns, struct timespec *ts)
{
    ts->tv_sec = (time_t)(ns / 1000000000ull);
    ts->tv_nsec = (long)(ns % 1000000000ull);
}

/* Sleeps until a packet, a kick or the engine's next deadline. */
static void io_sleep(nw_io_t *io)
{
    int inl = (io->cfg.flags & NW_IO_INLINE) != 0;
    pthread_mutex_lock(&io->mu);
    uint64_t deadline = nw_next_deadline(io->e);
    if (inl) {
        io->armed = UINT64_MAX;
        if (deadline != UINT64_MAX)
            rearm_timer(io);
        else {
            struct itimerspec off = {0};
            timerfd_settime(io->timer_fd, 0, &off, NULL);
        }
    }
    pthread_mutex_unlock(&io->mu);
    /* The ring's socket: a frame arrived, or (POLLOUT) a transmit frame is free again. */
    short ring_events = (short)(POLLIN | (io->ring_blocked ? POLLOUT : 0));
    struct pollfd pf[4] = {{.fd = io->wake_fd, .events = POLLIN},
                           {.fd = io->cfg.rx_fd, .events = POLLIN},
                           {.fd = io->ring ? nw_pring_fd(io->ring) : -1, .events = ring_events},
                           {.fd = io->timer_fd, .events = POLLIN}};
    struct timespec ts, *tsp = NULL;
    nfds_t nfd = 4;
    if (!inl && deadline != UINT64_MAX) {
        uint64_t now = mono_ns();
        to_timespec(deadline > now ? deadline - now : 0, &ts);
        tsp = &ts;
    }
    int r = ppoll(pf, nfd, tsp, NULL);
    if (r > 0 && io->ring && (pf[1].revents & POLLIN))
        io->udp_ready = 1;
    if (r > 0 && (pf[0].revents & POLLIN)) {
        uint64_t v;
        if (read(io->wake_fd, &v, sizeof(v)) < 0)
            io->last_errno = errno;
        io->st.wakeups++;
    }
    if (r > 0 && inl && (pf[3].revents & POLLIN)) {
        uint64_t v;
        if (read(io->timer_fd, &v, sizeof(v)) < 0)
            io->last_errno = errno;
    }
    pthread_mutex_lock(&io->mu);
    io->armed = UINT64_MAX; /* awake: it will compute the deadline again */
    pthread_mutex_unlock(&io->mu);
}

static void *io_thread(void *arg)
{
    nw_io_t *io = arg;
    uint64_t last_active = 0;
    atomic_store(&io->awake, 1);
    while (!io->stop) {
        io->st.loops++;
        pthread_mutex_lock(&io->drive_mu);
        int busy = io_step(io, STEP_RX, NULL);
        pthread_mutex_unlock(&io->drive_mu);
        if (busy) {
            last_active = io->busy_ns ? mono_ns() : 0;
            continue;
        }
        if (io->busy_ns && mono_ns() - last_active < io->busy_ns) {
            io->st.busy_polls++;
            continue;
        }
        /* A kick while awake sets only `kicked` (no eventfd write, no syscall for
         * posts that find the thread at work): look at it after saying we sleep. */
        atomic_store(&io->awake, 0);
        if (atomic_exchange(&io->kicked, 0)) {
            atomic_store(&io->awake, 1);
            continue;
        }
        io_sleep(io);
        atomic_store(&io->awake, 1);
    }
    return NULL;
}

/* A post's inline pass: send what the engine has now, from the caller's
 * thread, unless a pass is already running (then that one is kicked). */
static void inline_transmit(nw_io_t *io)
{
    if (pthread_mutex_trylock(&io->drive_mu) != 0) {
        nw_io_kick(io);
        return;
    }
    int more = io_step(io, STEP_INLINE, NULL);
    pthread_mutex_unlock(&io->drive_mu);
    if (more)
        nw_io_kick(io); /* a full batch: the thread sends the rest */
}

/* ------------------------------------------------------------- lifecycle */

static void io_free(nw_io_t *io)
{
    close_sockets(io);
    if (io->wake_fd >= 0)
        close(io->wake_fd);
    if (io->cq_fd >= 0)
        close(io->cq_fd);
    if (io->timer_fd >= 0)
        close(io->timer_fd);
    free(io->rx_buf);
    free(io->rx_msg);
    free(io->rx_iov);
    free(io->rx_addr);
    free(io->rx_ctl);
    free(io->tx_buf);
    free(io->tx_len);
    free(io->tx_dst);
    free(io->tx_msg);
    free(io->tx_iov);
    free(io->tx_order);
    free(io->tx_addr);
    free(io->tx_ctl);
    nw_link_free(io->drop_link);
    pthread_mutex_destroy(&io->mu);
    pthread_mutex_destroy(&io->drive_mu);
    free(io);
}

nw_io_t *nw_io_start(nw_engine_t *e, const nw_io_config_t *cfg, int32_t *err)
{
    int32_t dummy;
    if (!err)
        err = &dummy;
    *err = NW_EINVAL;
    if (!e || !cfg || cfg->rx_fd < 0 || cfg->batch == 0 || cfg->batch > 1024 ||
        cfg->tx_mode > NW_IO_TX_PACKET || cfg->rx_drop_ppm > 1000000 ||
        (cfg->flags & ~(uint32_t)NW_IO_FLAGS_ALL) || cfg->busy_poll_us > 1000000)
        return NULL;
    nw_io_t *io = calloc(1, sizeof(*io));
    if (!io) {
        *err = NW_ENOMEM;
        return NULL;
    }
    io->e = e;
    io->cfg = *cfg;
    io->raw_fd = io->wake_fd = io->cq_fd = io->timer_fd = -1;
    io->armed = UINT64_MAX;
    io->busy_ns = (cfg->flags & NW_IO_BUSY_POLL)
                      ? (uint64_t)(cfg->busy_poll_us ? cfg->busy_poll_us : 50) * 1000u
                      : 0;
    io->mtu = e->cfg.mtu;
    if (cfg->rx_drop_ppm > 0) {
        nw_link_config_t loss = {.loss = cfg->rx_drop_ppm / 1e6};
        io->drop_link = nw_link_new(&loss, cfg->rx_drop_seed);
        if (io->drop_link == NULL) {
            free(io);
            *err = NW_ENOMEM;
            return NULL;
        }
    }
    pthread_mutex_init(&io->mu, NULL);
    pthread_mutex_init(&io->drive_mu, NULL);
    uint32_t b = cfg->batch;
    io->tx_stride = e->cfg.mtu + (cfg->tx_mode == NW_IO_TX_RAW ? IO_IP_UDP_HDR : 0);
    io->rx_buf = malloc((size_t)b * IO_RX_BUF);
    io->rx_msg = calloc(b, sizeof(*io->rx_msg));
    io->rx_iov = calloc(b, sizeof(*io->rx_iov));
    io->rx_addr = calloc(b, sizeof(*io->rx_addr));
    io->rx_ctl = calloc(b, CTL_SPACE);
    io->tx_buf = malloc((size_t)b * io->tx_stride);
    io->tx_len = calloc(b, sizeof(*io->tx_len));
    io->tx_dst = calloc(b, sizeof(*io->tx_dst));
    io->tx_msg = calloc(b, sizeof(*io->tx_msg));
    io->tx_iov = calloc(b, sizeof(*io->tx_iov));
    io->tx_order = calloc(b, sizeof(*io->tx_order));
    io->tx_addr = calloc(b, sizeof(*io->tx_addr));
    io->tx_ctl = calloc(b, CTL_SPACE);
    if (!io->rx_buf || !io->rx_msg || !io->rx_iov || !io->rx_addr || !io->rx_ctl ||
        !io->tx_buf || !io->tx_len || !io->tx_dst || !io->tx_msg || !io->tx_iov ||
        !io->tx_addr || !io->tx_ctl || !io->tx_order) {
        *err = NW_ENOMEM;
        io_free(io);
        return NULL;
    }
    io->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    io->cq_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (cfg->flags & NW_IO_INLINE)
        io->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    int32_t r = (io->wake_fd < 0 || io->cq_fd < 0 ||
                 ((cfg->flags & NW_IO_INLINE) && io->timer_fd < 0))
                    ? NW_ESYS
                    : open_sockets(io);
    if (r != NW_OK) {
        io->last_errno = errno;
        *err = r;
        int saved = errno;
        io_free(io);
        errno = saved;
        return NULL;
    }
    if (pthread_create(&io->thread, NULL, io_thread, io) != 0) {
        *err = NW_ESYS;
        io_free(io);
        return NULL;
    }
    *err = NW_OK;
    return io;
}

void nw_io_kick(nw_io_t *io)
{
    atomic_store(&io->kicked, 1);
    if (atomic_load(&io->awake)) {
        __atomic_fetch_add(&io->st.kicks_elided, 1, __ATOMIC_RELAXED); /* it looks at kicked before it sleeps */
        return;
    }
    uint64_t one = 1;
    if (write(io->wake_fd, &one, sizeof(one)) < 0)
        io->last_errno = errno;
}

int32_t nw_io_stop(nw_io_t *io)
{
    if (!io)
        return NW_EINVAL;
    io->stop = 1;
    nw_io_kick(io);
    pthread_join(io->thread, NULL);
    io_free(io);
    return NW_OK;
}

int32_t nw_io_event_fd(const nw_io_t *io)
{
    return io->cq_fd;
}

int32_t nw_io_last_errno(const nw_io_t *io)
{
    return io->last_errno;
}

void nw_io_lock(nw_io_t *io)
{
    pthread_mutex_lock(&io->mu);
}

void nw_io_unlock(nw_io_t *io)
{
    pthread_mutex_unlock(&io->mu);
}

/* ------------------------------------------------------------- wrappers */

#define LOCKED(io, expr)                  \
    do {                                  \
        pthread_mutex_lock(&(io)->mu);    \
        int32_t r_ = (expr);              \
        pthread_mutex_unlock(&(io)->mu);  \
        return r_;                        \
    } while (0)

#define LOCKED_KICK(io, expr)             \
    do {                                  \
        pthread_mutex_lock(&(io)->mu);    \
        int32_t r_ = (expr);              \
        pthread_mutex_unlock(&(io)->mu);  \
        if (r_ == NW_OK)                  \
            send_now(io);                 \
        return r_;                        \
    } while (0)

/* After a post: transmit from this thread (NW_IO_INLINE) or wake the driver's. */
static void send_now(nw_io_t *io)
{
    if (io->cfg.flags & NW_IO_INLINE)
        inline_transmit(io);
    else
        nw_io_kick(io);
}

int32_t nw_io_mr_register(nw_io_t *io, void *base, uint64_t len, uint32_t access,
                          uint32_t *rkey_out)
{
    LOCKED(io, nw_mr_register(io->e, base, len, access, rkey_out));
}

int32_t nw_io_mr_deregister(nw_io_t *io, uint32_t rkey)
{
    LOCKED(io, nw_mr_deregister(io->e, rkey));
}

int32_t nw_io_peer_add(nw_io_t *io, uint32_t ip, uint16_t port, uint8_t mode,
                       uint32_t *peer_out)
{
    pthread_mutex_lock(&io->mu);
    int32_t r = nw_peer_add(io->e, ip, port, mode, peer_out);
    if (r == NW_OK && io->ring)
        nw_pring_peer_hint(io->ring, ip);
    pthread_mutex_unlock(&io->mu);
    return r;
}

int32_t nw_io_peer_close(nw_io_t *io, uint32_t peer)
{
    LOCKED_KICK(io, nw_peer_close(io->e, peer)); /* the kick sends the CTRL CLOSE */
}

int32_t nw_io_post_write(nw_io_t *io, uint32_t peer, uint64_t wr_id, const void *local,
                         uint64_t len, uint32_t rkey, uint64_t roffset)
{
    LOCKED_KICK(io, nw_post_write(io->e, peer, wr_id, local, len, rkey, roffset));
}

int32_t nw_io_post_writes(nw_io_t *io, uint32_t peer, uint32_t n, const uint64_t *wr_ids,
                          const uint8_t *local, const uint64_t *local_offsets, uint64_t len,
                          uint32_t rkey, const uint64_t *roffsets)
{
    if (!wr_ids || !local || !local_offsets || !roffsets)
        return NW_EINVAL;
    int32_t r = NW_OK;
    uint32_t i = 0;
    pthread_mutex_lock(&io->mu);
    for (; i < n; i++) {
        r = nw_post_write(io->e, peer, wr_ids[i], local + local_offsets[i], len, rkey,
                          roffsets[i]);
        if (r != NW_OK)
            break;
    }
    pthread_mutex_unlock(&io->mu);
    if (i > 0)
        send_now(io);
    return i > 0 ? (int32_t)i : r;
}

int32_t nw_io_post_read(nw_io_t *io, uint32_t peer, uint64_t wr_id, void *local, uint64_t len,
                        uint32_t rkey, uint64_t roffset)
{
    LOCKED_KICK(io, nw_post_read(io->e, peer, wr_id, local, len, rkey, roffset));
}

int32_t nw_io_post_send(nw_io_t *io, uint32_t peer, uint64_t wr_id, const void *buf,
                        uint64_t len)
{
    LOCKED_KICK(io, nw_post_send(io->e, peer, wr_id, buf, len));
}

int32_t nw_io_post_recv(nw_io_t *io, uint64_t wr_id, void *buf, uint64_t cap)
{
    LOCKED(io, nw_post_recv(io->e, wr_id, buf, cap));
}

int32_t nw_io_poll_cq(nw_io_t *io, nw_completion_t *out, uint32_t max)
{
    pthread_mutex_lock(&io->mu);
    int32_t n = nw_poll_cq(io->e, out, max);
    if (io->e->cq.count == 0 && io->cq_signalled) {
        uint64_t v;
        if (read(io->cq_fd, &v, sizeof(v)) < 0)
            io->last_errno = errno;
        io->cq_signalled = 0;
    } else {
        signal_completions(io); /* an inline waiter's pass left some behind */
    }
    pthread_mutex_unlock(&io->mu);
    return n;
}

/* Completions may be waiting: a hint read without the lock (busy polling). */
static int cq_nonempty(nw_io_t *io)
{
    return __atomic_load_n(&io->e->cq.count, __ATOMIC_RELAXED) != 0;
}

/* The waiter's own pass (NW_IO_INLINE): receive and run the engine here
 * instead of waiting for the driver's thread to do it and signal. */
static void waiter_step(nw_io_t *io, int block)
{
    if (block)
        pthread_mutex_lock(&io->drive_mu);
    else if (pthread_mutex_trylock(&io->drive_mu) != 0)
        return;
    int more = io_step(io, STEP_RX | STEP_INLINE | STEP_WAITER, NULL);
    pthread_mutex_unlock(&io->drive_mu);
    if (more)
        nw_io_kick(io); /* a full batch: the thread carries on */
}

int32_t nw_io_wait_cq(nw_io_t *io, nw_completion_t *out, uint32_t max, int64_t timeout_ns)
{
    int inl = (io->cfg.flags & NW_IO_INLINE) != 0;
    uint64_t start = mono_ns();
    uint64_t end = timeout_ns < 0 ? UINT64_MAX : start + (uint64_t)timeout_ns;
    uint64_t spin_end = io->busy_ns ? start + io->busy_ns : 0;
    int32_t n = 0;
    int rx_ready = 0;
    for (;;) {
        if (!io->busy_ns || cq_nonempty(io)) {
            n = nw_io_poll_cq(io, out, max);
            if (n != 0)
                break;
        }
        if (inl) {
            waiter_step(io, rx_ready);
            rx_ready = 0;
            if (cq_nonempty(io))
                continue;
        }
        uint64_t now = mono_ns();
        if (now >= end)
            break;
        if (now < spin_end)
            continue; /* busy polling */
        struct pollfd pf[3] = {{.fd = io->cq_fd, .events = POLLIN},
                               {.fd = io->cfg.rx_fd, .events = POLLIN},
                               {.fd = io->ring ? nw_pring_fd(io->ring) : -1, .events = POLLIN}};
        struct timespec ts, *tsp = NULL;
        if (end != UINT64_MAX) {
            to_timespec(end - now, &ts);
            tsp = &ts;
        }
        int r = ppoll(pf, inl ? 3 : 1, tsp, NULL);
        rx_ready = r > 0 && inl && ((pf[1].revents | pf[2].revents) & POLLIN);
        if (r > 0 && inl && io->ring && (pf[1].revents & POLLIN))
            io->udp_ready = 1;
    }
    return n;
}

void nw_io_stats_get(nw_io_t *io, nw_stats_t *engine_out, nw_io_stats_t *io_out)
{
    pthread_mutex_lock(&io->mu);
    if (engine_out)
        nw_stats_get(io->e, engine_out);
    if (io_out) {
        *io_out = io->st;
        if (io->ring) {
            nw_pring_stats_t rs;
            nw_pring_stats(io->ring, &rs);
            io_out->ring_rx_frames = rs.rx_frames;
            io_out->ring_rx_malformed = rs.rx_malformed;
            io_out->ring_rx_bad_csum = rs.rx_bad_csum;
            io_out->ring_rx_truncated = rs.rx_truncated;
            io_out->ring_rx_drops = rs.rx_ring_drops;
            io_out->ring_tx_frames = rs.tx_frames;
            io_out->ring_tx_full = rs.tx_ring_full;
            io_out->ring_tx_fallback = rs.tx_no_neighbor;
        }
    }
    pthread_mutex_unlock(&io->mu);
}
