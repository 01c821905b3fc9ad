/* AF_PACKET receive and transmit rings for tx=packet (packet_ring.h). */
#define _GNU_SOURCE
#include "packet_ring.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcx_divert.h"

#define RING_BLOCK (128u << 10) /* frames never cross a block */
#define FRAME_HEADROOM 128u     /* tpacket2_hdr, sockaddr_ll, virtio_net_hdr, alignment */
#define TX_DATA_OFF (TPACKET2_HDRLEN - sizeof(struct sockaddr_ll)) /* where a TX frame starts */
#define VNET_LEN ((uint32_t)sizeof(struct virtio_net_hdr))

struct nw_pring {
    int fd, link_fd;
    uint8_t *map;
    size_t map_len;
    uint8_t *rx, *tx;
    uint32_t frame_size, per_block;
    uint32_t max_frame; /* longer frames are left to the stack (tcx_divert's bound) */
    uint32_t rx_n, rx_head, tx_n, tx_head;
    uint32_t local_ip;
    uint16_t local_port;
    uint8_t mac[6];
    char ifname[IF_NAMESIZE];
    int loopback;
    int vnet; /* frames carry a virtio_net_hdr: checksums to offload */
    nw_neigh_cache_t neigh;
    nw_pring_stats_t st;
};

static uint8_t *frame_at(const nw_pring_t *r, uint8_t *base, uint32_t i)
{
    return base + (size_t)(i / r->per_block) * RING_BLOCK + (size_t)(i % r->per_block) * r->frame_size;
}

static uint32_t status_of(const uint8_t *f)
{
    return __atomic_load_n(&((const struct tpacket2_hdr *)f)->tp_status, __ATOMIC_ACQUIRE);
}

static void set_status(uint8_t *f, uint32_t s)
{
    __atomic_store_n(&((struct tpacket2_hdr *)f)->tp_status, s, __ATOMIC_RELEASE);
}

/* Classic BPF on the socket: IPv4 without options, UDP, not a fragment, to
 * local_ip:local_port (the same frames tcx_divert takes from the stack). */
static int attach_filter(int fd, uint32_t ip, uint16_t port)
{
    enum { DROP = 13 };
#define TO_DROP(i) ((uint8_t)(DROP - (i) - 1))
    struct sock_filter f[] = {
        /* 0 */ BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
        /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, TO_DROP(1)),
        /* 2 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14),
        /* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x45, 0, TO_DROP(3)),
        /* 4 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23),
        /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, TO_DROP(5)),
        /* 6 */ BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 20),
        /* 7 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x3fff, TO_DROP(7), 0),
        /* 8 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 30),
        /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ip, 0, TO_DROP(9)),
        /* 10 */ BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 36),
        /* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, port, 0, TO_DROP(11)),
        /* 12 */ BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
        /* 13 */ BPF_STMT(BPF_RET | BPF_K, 0),
    };
#undef TO_DROP
    struct sock_fprog prog = {.len = (unsigned short)(sizeof(f) / sizeof(f[0])), .filter = f};
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

/* The interface's MAC address and whether it is a loopback. */
static int interface_info(nw_pring_t *r, uint32_t ifindex)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    if (!if_indextoname(ifindex, r->ifname))
        return -1;
    memcpy(ifr.ifr_name, r->ifname, IF_NAMESIZE);
    if (ioctl(r->fd, SIOCGIFHWADDR, &ifr) < 0)
        return -1;
    memcpy(r->mac, ifr.ifr_hwaddr.sa_data, 6);
    if (ioctl(r->fd, SIOCGIFFLAGS, &ifr) < 0)
        return -1;
    r->loopback = (ifr.ifr_flags & IFF_LOOPBACK) != 0;
    return 0;
}

static int set_int(int fd, int opt, int v)
{
    return setsockopt(fd, SOL_PACKET, opt, &v, sizeof(v));
}

static uint32_t blocks_for(uint32_t bytes, uint32_t per_block, uint32_t frame_size,
                           uint32_t min_frames)
{
    uint32_t frames = bytes / frame_size;
    if (frames < min_frames)
        frames = min_frames;
    return (frames + per_block - 1) / per_block;
}

/* Socket options, filter and rings, in the order the kernel wants them. */
static int32_t setup_socket(nw_pring_t *r, const nw_pring_config_t *c)
{
    int fd = r->fd;
    if (set_int(fd, PACKET_VERSION, TPACKET_V2) < 0)
        return NW_ESYS;
    r->vnet = set_int(fd, PACKET_VNET_HDR, 1) == 0;
    set_int(fd, PACKET_LOSS, 1);           /* a frame the kernel refuses is skipped, not stuck */
    set_int(fd, PACKET_QDISC_BYPASS, 1);   /* straight to the device */
    set_int(fd, PACKET_IGNORE_OUTGOING, 1); /* our own frames do not come back */
    int sndbuf = (int)(c->tx_bytes * 2u);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    if (attach_filter(fd, c->local_ip, c->local_port) < 0)
        return NW_ESYS;
    uint32_t rx_blocks = blocks_for(c->rx_bytes, r->per_block, r->frame_size, 64);
    uint32_t tx_blocks = blocks_for(c->tx_bytes, r->per_block, r->frame_size, 64);
    struct tpacket_req rq = {.tp_block_size = RING_BLOCK, .tp_block_nr = rx_blocks,
                             .tp_frame_size = r->frame_size,
                             .tp_frame_nr = rx_blocks * r->per_block};
    if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &rq, sizeof(rq)) < 0)
        return NW_ESYS;
    struct tpacket_req tq = rq;
    tq.tp_block_nr = tx_blocks;
    tq.tp_frame_nr = tx_blocks * r->per_block;
    if (setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &tq, sizeof(tq)) < 0)
        return NW_ESYS;
    r->rx_n = rq.tp_frame_nr;
    r->tx_n = tq.tp_frame_nr;
    r->map_len = (size_t)(rx_blocks + tx_blocks) * RING_BLOCK;
    void *m = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED) {
        r->map_len = 0;
        return NW_ESYS;
    }
    r->map = m;
    r->rx = r->map;
    r->tx = r->map + (size_t)rx_blocks * RING_BLOCK;
    struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
                            .sll_ifindex = (int)c->ifindex};
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
        return NW_ESYS;
    return NW_OK;
}

nw_pring_t *nw_pring_open(const nw_pring_config_t *c, int32_t *err)
{
    *err = NW_EINVAL;
    if (!c || c->ifindex == 0 || c->max_payload == 0 || c->max_payload > 65507)
        return NULL;
    nw_pring_t *r = calloc(1, sizeof(*r));
    if (!r) {
        *err = NW_ENOMEM;
        return NULL;
    }
    r->link_fd = -1;
    r->local_ip = c->local_ip;
    r->local_port = c->local_port;
    r->frame_size = (FRAME_HEADROOM + NW_FRAME_HLEN + c->max_payload + TPACKET_ALIGNMENT - 1) &
                    ~(uint32_t)(TPACKET_ALIGNMENT - 1);
    r->per_block = RING_BLOCK / r->frame_size;
    r->max_frame = NW_FRAME_HLEN + c->max_payload;
    nw_neigh_init(&r->neigh);
    int32_t rc = NW_ESYS;
    r->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0); /* no protocol: silent until bind */
    if (r->fd < 0) {
        rc = errno == EPERM || errno == EACCES ? NW_EPERM : NW_ESYS;
        goto fail;
    }
    if (r->per_block == 0 || interface_info(r, c->ifindex) < 0)
        goto fail;
    rc = setup_socket(r, c);
    if (rc != NW_OK)
        goto fail;
    int32_t link = nw_tcx_divert_attach(c->ifindex, c->local_ip, c->local_port, r->max_frame);
    if (link < 0) {
        rc = link;
        goto fail;
    }
    r->link_fd = link;
    *err = NW_OK;
    return r;
fail:;
    int saved = errno;
    nw_pring_close(r);
    errno = saved;
    *err = rc;
    return NULL;
}

void nw_pring_close(nw_pring_t *r)
{
    if (!r)
        return;
    if (r->link_fd >= 0)
        close(r->link_fd);
    if (r->map)
        munmap(r->map, r->map_len);
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}

int32_t nw_pring_fd(const nw_pring_t *r)
{
    return r->fd;
}

int32_t nw_pring_offloads_checksum(const nw_pring_t *r)
{
    return r->vnet;
}

/* ------------------------------------------------------------- transmit */

static uint32_t tx_index(const nw_pring_t *r, uint32_t k)
{
    return (r->tx_head + k) % r->tx_n;
}

static uint32_t tx_hdr_len(const nw_pring_t *r)
{
    return (r->vnet ? VNET_LEN : 0) + NW_FRAME_HLEN;
}

uint8_t *nw_pring_tx_payload(nw_pring_t *r, uint32_t k)
{
    if (k >= r->tx_n)
        return NULL;
    uint8_t *f = frame_at(r, r->tx, tx_index(r, k));
    if (status_of(f) != TP_STATUS_AVAILABLE) {
        r->st.tx_ring_full++;
        return NULL;
    }
    return f + TX_DATA_OFF + tx_hdr_len(r);
}

int32_t nw_pring_tx_fill(nw_pring_t *r, uint32_t k, uint32_t plen, const nw_dest_t *d)
{
    const uint8_t *mac = nw_neigh_find(&r->neigh, d->ip);
    if (!mac) {
        r->st.tx_no_neighbor++;
        return 0;
    }
    uint8_t *f = frame_at(r, r->tx, tx_index(r, k));
    uint8_t *p = f + TX_DATA_OFF;
    if (r->vnet) {
        /* Checksum offload; hdr_len = the whole frame: the kernel copies it
         * into the skb (frags pointing into the ring could outlive the slot). */
        struct virtio_net_hdr v = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
                                   .gso_type = VIRTIO_NET_HDR_GSO_NONE,
                                   .hdr_len = (uint16_t)(NW_FRAME_HLEN + plen),
                                   .csum_start = NW_ETH_HLEN + 20,
                                   .csum_offset = 6};
        memcpy(p, &v, VNET_LEN);
        p += VNET_LEN;
    }
    nw_eth_write(p, mac, r->mac);
    nw_udp_addr_t a = {.src_ip = r->local_ip, .dst_ip = d->ip, .src_port = d->src_port,
                       .dst_port = d->port, .ecn = d->ecn};
    nw_ipv4_udp_write(p + NW_ETH_HLEN, plen, &a,
                      r->vnet ? NW_UDP_CSUM_PARTIAL : NW_UDP_CSUM_FULL);
    ((struct tpacket2_hdr *)f)->tp_len = tx_hdr_len(r) + plen;
    return 1;
}

int32_t nw_pring_tx_commit(nw_pring_t *r, uint32_t n)
{
    if (n == 0)
        return NW_OK;
    for (uint32_t k = 0; k < n; k++)
        set_status(frame_at(r, r->tx, tx_index(r, k)), TP_STATUS_SEND_REQUEST);
    r->tx_head = tx_index(r, n);
    r->st.tx_frames += n;
    r->st.tx_flushes++;
    if (send(r->fd, NULL, 0, MSG_DONTWAIT) < 0 && errno != EAGAIN && errno != ENOBUFS) {
        r->st.tx_errors++; /* frames not taken stay requested: the next flush sends them */
        return NW_ESYS;
    }
    return NW_OK;
}

/* ------------------------------------------------------------- receive */

int32_t nw_pring_rx_ready(const nw_pring_t *r)
{
    return (status_of(frame_at(r, r->rx, r->rx_head)) & TP_STATUS_USER) != 0;
}

void nw_pring_rx_release(nw_pring_t *r)
{
    set_status(frame_at(r, r->rx, r->rx_head), TP_STATUS_KERNEL);
    r->rx_head = (r->rx_head + 1) % r->rx_n;
}

int32_t nw_pring_rx_next(nw_pring_t *r, nw_frame_t *out, const uint8_t **payload)
{
    for (;;) {
        uint8_t *f = frame_at(r, r->rx, r->rx_head);
        uint32_t status = status_of(f);
        if (!(status & TP_STATUS_USER))
            return 0;
        const struct tpacket2_hdr *h = (const struct tpacket2_hdr *)f;
        r->st.rx_frames++;
        uint32_t mac = h->tp_mac, snap = h->tp_snaplen;
        if (snap < h->tp_len || h->tp_len > r->max_frame) {
            r->st.rx_truncated++; /* too big: tcx_divert left it to the stack and rx_fd */
            nw_pring_rx_release(r);
            continue;
        }
        int32_t verify = !(status & (TP_STATUS_CSUMNOTREADY | TP_STATUS_CSUM_VALID));
        int32_t rc = mac <= r->frame_size && snap <= r->frame_size - mac
                         ? nw_frame_parse(f + mac, snap, verify, out)
                         : NW_FRAME_SHORT;
        if (rc == NW_FRAME_OK &&
            (out->addr.dst_ip != r->local_ip || out->addr.dst_port != r->local_port))
            rc = NW_FRAME_NOT_UDP; /* the socket filter admits only ours */
        if (rc != NW_FRAME_OK) {
            r->st.rx_malformed++;
            if (rc == NW_FRAME_BAD_UDP_CSUM)
                r->st.rx_bad_csum++;
            nw_pring_rx_release(r);
            continue;
        }
        if (!(out->src_mac[0] & 1)) /* a group address is no next hop */
            nw_neigh_learn(&r->neigh, out->addr.src_ip, out->src_mac);
        *payload = f + mac + out->payload_off;
        return 1;
    }
}

void nw_pring_peer_hint(nw_pring_t *r, uint32_t ip)
{
    if (nw_neigh_find(&r->neigh, ip))
        return;
    if (r->loopback)
        nw_neigh_learn(&r->neigh, ip, r->mac); /* every address on lo is this host's */
    else
        nw_neigh_from_kernel(&r->neigh, ip, r->ifname);
}

void nw_pring_stats(nw_pring_t *r, nw_pring_stats_t *out)
{
    struct tpacket_stats ts;
    socklen_t len = sizeof(ts);
    if (getsockopt(r->fd, SOL_PACKET, PACKET_STATISTICS, &ts, &len) == 0)
        r->st.rx_ring_drops += ts.tp_drops; /* the kernel resets its counters on each read */
    *out = r->st;
}
